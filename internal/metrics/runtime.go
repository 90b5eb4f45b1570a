package metrics

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// runtimeFamilies are the Go runtime and process series Prometheus' Go
// client would export under the same names, the ones worth a dashboard.
func runtimeFamilies() []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fams := []family{
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{name: "go_info", help: "Information about the Go environment.", kind: "gauge",
			samples: []sample{{labels: []label{{"version", runtime.Version()}}, value: 1}}},
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc)),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse)),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys)),
		{name: "go_memstats_alloc_bytes_total", help: "Total number of bytes allocated in heap until now.", kind: "counter",
			samples: []sample{{value: float64(ms.TotalAlloc)}}},
		{name: "go_gc_cycles_total", help: "Completed GC cycles.", kind: "counter",
			samples: []sample{{value: float64(ms.NumGC)}}},
		gauge("go_threads", "Number of OS threads created.", float64(threads())),
	}
	return append(fams, processFamilies()...)
}

func threads() int {
	n, _ := runtime.ThreadCreateProfile(nil)
	return n
}

// processFamilies reads the process series from /proc where there is one;
// elsewhere there are none.
func processFamilies() []family {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15, starttime 22,
	// vsize 23, rss 24 (pages).
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	field := func(n int) float64 {
		if n-3 >= len(f) {
			return 0
		}
		v, _ := strconv.ParseFloat(f[n-3], 64)
		return v
	}
	const ticks = 100 // USER_HZ on every Linux Go supports
	fams := []family{
		{name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.", kind: "counter",
			samples: []sample{{value: (field(14) + field(15)) / ticks}}},
		gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", field(23)),
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", field(24)*float64(os.Getpagesize())),
	}
	if boot := bootTime(); boot > 0 {
		fams = append(fams, gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+field(22)/ticks))
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		fams = append(fams, gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds))))
	}
	return fams
}

// bootTime is the btime line of /proc/stat: the clock's boot instant,
// to which a process's start ticks are relative.
func bootTime() float64 {
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}
