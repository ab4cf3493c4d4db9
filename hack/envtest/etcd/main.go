// Command etcd builds the real etcd server from Go modules for envtest and `--local`.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
