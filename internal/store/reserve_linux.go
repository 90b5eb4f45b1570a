package store

import (
	"errors"
	"os"
	"syscall"
)

// allocate makes the file system hand f n bytes of blocks without writing
// them, which is what the reserve is for and costs no data write. It
// returns errors.ErrUnsupported when the file system does not allocate
// (some accept the call and hold nothing, so the blocks are counted after
// it), and the caller writes the bytes instead.
func allocate(f *os.File, n int64) error {
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
			return errors.ErrUnsupported
		}
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Blocks*512 < n {
		// Allocated in name only: undo, and let the caller write.
		if err := f.Truncate(0); err != nil {
			return err
		}
		return errors.ErrUnsupported
	}
	return nil
}
