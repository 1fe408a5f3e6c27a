// Command kube-controlplane is a multi-call binary holding the pieces of a
// real Kubernetes control plane for mendflow's tests, all from one pinned
// Kubernetes release (see go.mod):
//
//	kube-controlplane kube-apiserver [flags]           # k8s.io/kubernetes/cmd/kube-apiserver
//	kube-controlplane kube-controller-manager [flags]  # k8s.io/kubernetes/cmd/kube-controller-manager
//	kube-controlplane kube-scheduler [flags]           # k8s.io/kubernetes/cmd/kube-scheduler
//	kube-controlplane etcd [flags]                     # go.etcd.io/etcd/server/v3 (the version Kubernetes pins)
//	kube-controlplane version
//
// Like busybox, it also dispatches on the name it was started under, so a
// symlink named kube-apiserver, kube-controller-manager, kube-scheduler or
// etcd runs that
// component directly.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // for CronJob time zone support, as the upstream mains do

	etcdversion "go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/component-base/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = `usage: kube-controlplane COMMAND [flags]

commands:
  kube-apiserver           run the Kubernetes API server
  kube-controller-manager  run the Kubernetes controller manager
  kube-scheduler           run the Kubernetes scheduler
  etcd                     run etcd
  version                  print the pinned versions
`

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name == "kube-controlplane" || !isCommand(name) {
		if len(args) == 0 {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	os.Exit(run(name, args))
}

func isCommand(name string) bool {
	switch name {
	case "kube-apiserver", "apiserver", "kube-controller-manager", "controller-manager",
		"kube-scheduler", "scheduler", "etcd", "version":
		return true
	}
	return false
}

func run(name string, args []string) int {
	switch name {
	case "kube-apiserver", "apiserver":
		cmd := apiserver.NewAPIServerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "kube-controller-manager", "controller-manager":
		cmd := controllermanager.NewControllerManagerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "kube-scheduler", "scheduler":
		cmd := scheduler.NewSchedulerCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	case "etcd":
		// etcdmain.Main reads args[0] as the program name and exits itself.
		etcdmain.Main(append([]string{"etcd"}, args...))
		return 0
	case "version", "--version", "-version":
		fmt.Printf("kubernetes %s\netcd %s\n", version.Get().GitVersion, etcdversion.Version)
		return 0
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "kube-controlplane: unknown command %q\n\n%s", name, usage)
	return 2
}
