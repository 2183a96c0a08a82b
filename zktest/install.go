package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

const (
	zookeeperJar = "/usr/share/java/zookeeper.jar"
	slf4jJar     = "/usr/share/java/slf4j-simple.jar"
	// The Netty connection factory (TLS, StartTLSServer) also needs these,
	// which Debian's zookeeper.jar manifest does not list.
	nettyJars = "/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar:/usr/share/java/netty-transport-native-unix-common.jar"
	classPath = zookeeperJar + ":" + slf4jJar + ":" + nettyJars
)

// ErrNotInstalled is returned (wrapped) when java or the ZooKeeper jars in
// /usr/share/java are missing. Its message holds the install command.
var ErrNotInstalled = errors.New("zktest: Apache ZooKeeper is not installed; install it with: apt-get update && apt-get install -y zookeeper")

// Installed returns nil if java and the ZooKeeper jars are present, and
// otherwise an error wrapping ErrNotInstalled that says what is missing.
func Installed() error {
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("%w (java not found on PATH)", ErrNotInstalled)
	}
	for _, jar := range []string{zookeeperJar, slf4jJar} {
		if _, err := os.Stat(jar); err != nil {
			return fmt.Errorf("%w (%s missing)", ErrNotInstalled, jar)
		}
	}
	return nil
}
