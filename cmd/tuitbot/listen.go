package main

import (
	"fmt"
	"net"
)

// listenHost checks the form of a --listen value before anything starts, so
// a typo is a usage error rather than a failure to bind.
func listenHost(listen string) (string, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", usageError{fmt.Errorf("--listen %q: want host:port such as 127.0.0.1:8765: %w", listen, err)}
	}
	return host, nil
}

// loopbackListen checks the --listen value of a server that listens on
// loopback only; what names it in the message.
func loopbackListen(listen, what string) error {
	host, err := listenHost(listen)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError{fmt.Errorf("--listen %q: %s listens on loopback only (127.0.0.1, ::1 or localhost)", listen, what)}
	}
	return nil
}
