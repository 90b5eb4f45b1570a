package store_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// The reserve is only worth its name if the file system has handed it
// blocks: deleting it must free real space on a full disk. Allocated
// without writing or written, it holds at least its size in blocks.
func TestReserveHoldsItsBlocks(t *testing.T) {
	for _, size := range []int64{4096, store.DefaultReserveBytes} {
		path := filepath.Join(t.TempDir(), "tuitbot.db")
		db := open(t, path, store.Options{ReserveBytes: size})
		if !db.ReserveReady() {
			t.Fatalf("size %d: reserve not ready after open", size)
		}
		st, err := os.Stat(store.ReservePath(path))
		if err != nil {
			t.Fatal(err)
		}
		blocks := st.Sys().(*syscall.Stat_t).Blocks * 512
		if st.Size() != size || blocks < size {
			t.Errorf("size %d: reserve is %d bytes holding %d bytes of blocks", size, st.Size(), blocks)
		}
		if !db.ReleaseReserve() || db.ReserveReady() {
			t.Errorf("size %d: release left the reserve in place", size)
		}
		if err := db.EnsureReserve(); err != nil || !db.ReserveReady() {
			t.Errorf("size %d: reserve not made again: %v", size, err)
		}
	}
}
