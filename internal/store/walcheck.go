package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The WAL and its index are SQLite's documented file formats
// (https://sqlite.org/walformat.html). A WAL starts with a 32-byte header;
// each frame is a 24-byte frame header and one page. The -shm file starts
// with the wal-index header, kept twice (a writer updates the second copy,
// then the first), which every connection on the machine trusts for how
// many frames of the WAL are committed.
const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagicLE         = 0x377f0682
	walMagicBE         = 0x377f0683
	walFormatVersion   = 3007000
	// indexHeaderSize is one copy of the wal-index header.
	indexHeaderSize = 48
	// walCheckTries is how often the WAL is compared with the index
	// without a lock before the check takes SQLite's write lock.
	walCheckTries = 8
)

// indexHeader is the part of the wal-index header the check compares. The
// index is in the machine's byte order; the salt is kept as the WAL's
// bytes.
type indexHeader struct {
	raw        [indexHeaderSize]byte
	initDone   bool
	pageSize   int64
	maxFrame   uint32
	dbPages    uint32
	frameCksum [2]uint32
	salt       []byte
}

// readIndexHeader reads the wal-index header from shm. ok is false while
// the two copies differ, that is while a writer is updating them.
func readIndexHeader(shm *os.File) (h indexHeader, ok bool, err error) {
	var b [2 * indexHeaderSize]byte
	if _, err := shm.ReadAt(b[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			// Not initialised yet: there is nothing to compare.
			return h, true, nil
		}
		return h, false, err
	}
	if !bytes.Equal(b[:indexHeaderSize], b[indexHeaderSize:]) {
		return h, false, nil
	}
	copy(h.raw[:], b[:indexHeaderSize])
	ne := binary.NativeEndian
	h.initDone = b[12] != 0
	sz := int64(ne.Uint16(b[14:16]))
	h.pageSize = sz&0xfe00 + (sz&1)<<16
	h.maxFrame = ne.Uint32(b[16:20])
	h.dbPages = ne.Uint32(b[20:24])
	h.frameCksum = [2]uint32{ne.Uint32(b[24:28]), ne.Uint32(b[28:32])}
	h.salt = append([]byte(nil), b[32:40]...)
	return h, true, nil
}

// checkWAL compares the WAL with the wal-index header SQLite keeps in
// -shm. Deleting or renaming files is caught by CheckFiles' stat; this
// catches a WAL truncated or overwritten in place: shorter than the frames
// the index counts as committed, a header with other salts (another
// database's WAL, or a damaged one), or a last committed frame that no
// longer carries the checksum the index recorded. Such a WAL silently
// loses what was committed (and a checkpoint would copy the damage into
// the database), so processes no longer share one view of the data.
//
// It reads 96 bytes of -shm, the WAL's 32-byte header and one 24-byte
// frame header: cheap enough to run before every send. Writers in this or
// another process may change the WAL meanwhile, so the index header is
// read before and after, and a comparison counts only when it did not
// change in between. When writers keep changing it, the check runs once
// more holding SQLite's write lock, under which the index and the WAL
// stand still.
func (d *DB) checkWAL(ctx context.Context) error {
	if d.shm == nil {
		return nil
	}
	for range d.walTries {
		problem, stable, err := d.compareWithIndex()
		if err != nil {
			return err
		}
		if stable {
			return d.walProblem(problem)
		}
	}
	d.walMu.Lock()
	defer d.walMu.Unlock()
	if _, err := d.pin.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("database %s: lock it to check the WAL: %w", d.Path, err)
	}
	defer func() { _, _ = d.pin.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }()
	problem, stable, err := d.compareWithIndex()
	switch {
	case err != nil:
		return err
	case !stable:
		problem = "its index in -shm changed while every writer was locked out, so something other than SQLite wrote to it"
	}
	return d.walProblem(problem)
}

// compareWithIndex compares the WAL with the index header once. stable is
// false when a writer changed the index meanwhile, so the answer does not
// count.
func (d *DB) compareWithIndex() (problem string, stable bool, err error) {
	before, ok, err := readIndexHeader(d.shm)
	if err != nil {
		return "", false, fmt.Errorf("database file %s: %w", d.Path+"-shm", err)
	}
	if !ok {
		return "", false, nil
	}
	if !before.initDone || before.maxFrame == 0 {
		// Nothing committed is in the WAL: SQLite starts it afresh on the
		// next write, whatever the file holds.
		return "", true, nil
	}
	problem, err = d.compareWAL(before)
	if err != nil {
		return "", false, fmt.Errorf("database file %s: %w", d.Path+"-wal", err)
	}
	after, ok, err := readIndexHeader(d.shm)
	if err != nil {
		return "", false, fmt.Errorf("database file %s: %w", d.Path+"-shm", err)
	}
	return problem, ok && after.raw == before.raw, nil
}

func (d *DB) walProblem(problem string) error {
	if problem == "" {
		return nil
	}
	return fmt.Errorf("database file %s was changed in place while tuitbot was running (%s); committed writes may be lost and other processes no longer see what this one wrote: "+
		"stop every tuitbot process, restore the database from a backup if records are missing, and start again (then check get_recent_mutations)", d.Path+"-wal", problem)
}

// compareWAL describes how the WAL disagrees with the index header h, or
// returns "" when it agrees.
func (d *DB) compareWAL(h indexHeader) (string, error) {
	f := d.wal
	if f == nil {
		// There was no WAL when the database was opened.
		var err error
		if f, err = os.Open(d.Path + "-wal"); err != nil {
			return "", err
		}
		defer f.Close()
	}
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	frameSize := walFrameHeaderSize + h.pageSize
	need := walHeaderSize + int64(h.maxFrame)*frameSize
	if st.Size() < need {
		return fmt.Sprintf("truncated to %d bytes, but its committed frames end at byte %d", st.Size(), need), nil
	}
	// A read past the end means the file shrank after the stat: the
	// caller re-reads the index to tell SQLite's own truncation (which
	// changes the index first) from tampering.
	shrank := func() string {
		return fmt.Sprintf("truncated to less than %d bytes, the end of its committed frames", need)
	}
	var hdr [walHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], 0); errors.Is(err, io.EOF) {
		return shrank(), nil
	} else if err != nil {
		return "", err
	}
	be := binary.BigEndian
	magic := be.Uint32(hdr[0:4])
	var order binary.ByteOrder
	switch magic {
	case walMagicLE:
		order = binary.LittleEndian
	case walMagicBE:
		order = binary.BigEndian
	default:
		return "overwritten: its header is not a WAL header", nil
	}
	s0, s1 := walChecksum(order, hdr[:24])
	if be.Uint32(hdr[4:8]) != walFormatVersion || be.Uint32(hdr[24:28]) != s0 || be.Uint32(hdr[28:32]) != s1 {
		return "overwritten: its header is damaged", nil
	}
	if int64(be.Uint32(hdr[8:12])) != h.pageSize || !bytes.Equal(hdr[16:24], h.salt) {
		return "overwritten: its header belongs to another WAL than the one in use", nil
	}
	var fh [walFrameHeaderSize]byte
	if _, err := f.ReadAt(fh[:], need-frameSize); errors.Is(err, io.EOF) {
		return shrank(), nil
	} else if err != nil {
		return "", err
	}
	if !bytes.Equal(fh[8:16], h.salt) || be.Uint32(fh[4:8]) != h.dbPages ||
		be.Uint32(fh[16:20]) != h.frameCksum[0] || be.Uint32(fh[20:24]) != h.frameCksum[1] {
		return "overwritten: its last committed frame is not the one SQLite wrote", nil
	}
	return "", nil
}

// walChecksum is SQLite's WAL checksum over b (a multiple of 8 bytes), its
// 32-bit words read in order.
func walChecksum(order binary.ByteOrder, b []byte) (s0, s1 uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
