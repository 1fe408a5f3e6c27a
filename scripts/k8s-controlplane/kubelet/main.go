// Command kubelet is the kubelet of the Kubernetes release pinned in ../go.mod
// (the same release as the control plane), for mendflow's real-node tests.
// Built by scripts/build-k8s.sh; not shipped. Same main as
// k8s.io/kubernetes/cmd/kubelet, nothing added.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // for client metric registration
	_ "k8s.io/component-base/metrics/prometheus/version"  // for version metric registration
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	command := app.NewKubeletCommand(context.Background())
	code := cli.Run(command)
	os.Exit(code)
}
