package store

import (
	"os"
	"syscall"
)

// walWrites tells of each write to the file at path (the WAL, which every
// commit writes, whichever process makes it) on the returned channel, as
// the kernel reports it, until stop is called: a quiet database then
// costs nothing to watch.
func walWrites(path string) (writes <-chan struct{}, stop func(), err error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_MODIFY); err != nil {
		syscall.Close(fd)
		return nil, nil, err
	}
	// A non-blocking descriptor reads through the runtime's poller, so
	// closing it ends a read in progress.
	f := os.NewFile(uintptr(fd), "inotify "+path)
	ch := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, func() { f.Close() }, nil
}
