package zkwire_test

import "encoding/binary"

// frame returns a frame whose body is the concatenation of body.
func frame(body ...[]byte) []byte {
	var b []byte
	for _, x := range body {
		b = append(b, x...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func i32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// createBody is the body of a create request for path with xid.
func createBody(xid int32, path string) []byte {
	b := append(i32(xid), i32(1)...)
	b = append(b, i32(int32(len(path)))...)
	b = append(b, path...)
	return append(b, make([]byte, 30)...) // data, ACL, flags
}

// multiOp is the header of an operation in a multi: type, done, err.
func multiOp(op int32) []byte { return append(append(i32(op), 0), i32(-1)...) }

// multiBody is a multi of a create of path and a setData.
func multiBody(xid int32, path string) []byte {
	create := append(i32(int32(len(path))), path...)
	create = append(create, make([]byte, 30)...)
	b := append(append(append(i32(xid), i32(14)...), multiOp(1)...), create...)
	return append(append(b, multiOp(5)...), make([]byte, 20)...)
}

// readBody is the body of a read of path (exists, getData, getChildren,
// getChildren2) with xid, asking for a watch or not.
func readBody(xid, op int32, path string, watch bool) []byte {
	b := append(append(i32(xid), i32(op)...), i32(int32(len(path)))...)
	b = append(b, path...)
	if watch {
		return append(b, 1)
	}
	return append(b, 0)
}
