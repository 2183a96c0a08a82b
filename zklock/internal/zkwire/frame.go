package zkwire

import "encoding/binary"

// LengthSize is the size of the big-endian length that precedes each
// frame's body.
const LengthSize = 4

// A Want says how many bytes of a frame's body a reader needs, given the
// bytes collected so far (head) and the frame's number in the stream,
// counted from 1. A Splitter asks again after each addition, so a Want
// may ask for more once it has seen a field that says more follows; it
// must depend only on head and frame.
type Want func(head []byte, frame int) int

// Splitter follows a stream of frames that arrives in chunks of any size,
// and hands over the first bytes of each frame's body (its head) as soon
// as they have arrived: as many as its Want asks for, or the whole body if
// that is shorter. The rest of the body is skipped without copying.
//
// The zero Splitter is not usable; make one with NewSplitter.
type Splitter struct {
	want   Want
	lenBuf [LengthSize]byte
	lenN   int    // bytes of lenBuf filled
	length uint32 // body length of the current frame
	head   []byte // body bytes collected for the current frame
	skip   uint32 // body bytes still to skip after the head was handed over
	frames int    // frames whose head has been handed over
}

// NewSplitter returns a Splitter at the start of a stream whose heads are
// as long as want asks.
func NewSplitter(want Want) Splitter {
	return Splitter{want: want}
}

// Frames returns how many frames' heads s has handed over.
func (s *Splitter) Frames() int { return s.frames }

// Split consumes the next chunk p of the stream and calls emit with the
// head of each frame whose head it completes, in stream order; frame is
// the frame's number, from 1. head is valid only until emit returns.
func (s *Splitter) Split(p []byte, emit func(head []byte, frame int)) {
	for len(p) > 0 {
		if s.skip > 0 {
			k := min(int64(s.skip), int64(len(p)))
			s.skip -= uint32(k)
			p = p[k:]
			continue
		}
		if s.lenN < LengthSize {
			k := copy(s.lenBuf[s.lenN:], p)
			s.lenN += k
			p = p[k:]
			if s.lenN < LengthSize {
				return
			}
			s.length = binary.BigEndian.Uint32(s.lenBuf[:])
			s.head = s.head[:0]
		}
		// Collect body bytes until want is satisfied or the body ends.
		for {
			need := s.need()
			if len(s.head) >= need {
				break
			}
			if len(p) == 0 {
				return
			}
			k := min(need-len(s.head), len(p))
			s.head = append(s.head, p[:k]...)
			p = p[k:]
		}
		s.frames++
		emit(s.head, s.frames)
		s.skip = s.length - uint32(len(s.head))
		s.lenN = 0
	}
}

// need is how many body bytes the current frame's head wants: never more
// than the body holds, never less than none.
func (s *Splitter) need() int {
	n := s.want(s.head, s.frames+1)
	if int64(n) > int64(s.length) {
		n = int(s.length)
	}
	return max(n, 0)
}
