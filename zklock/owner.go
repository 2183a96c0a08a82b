package zklock

import (
	"encoding/json"
	"strings"
)

// Owner is the data zklock stores in each lock node: who created it.
type Owner struct {
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Label string `json:"label,omitempty"`
}

func decodeOwner(data []byte) Owner {
	var o Owner
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &o) == nil {
		return o
	}
	// Foreign data (Curator stores the host's IP address, kazoo an
	// identifier): show it as text.
	return Owner{Label: strings.ToValidUTF8(string(data), "?")}
}

// MaxValueLen is the largest node data (an election value) accepted:
// ZooKeeper's default packet limit (jute.maxbuffer) is 1 MB, and the request
// carries the path and ACL too.
const MaxValueLen = 1000 * 1000
