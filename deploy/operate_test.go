package deploy

import (
	"net"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	facade "github.com/facade-dev/facade"
)

// TestReadinessProbeFitsReadyz: the readiness probe waits longer than
// /readyz can take (it waits for Redis at most facade.ReadyRedisWait), one
// slow or failed answer does not take a pod out (with every pod probing
// the same Redis, a blip failed them all at once), and a draining pod is
// out of the Service before its drain delay ends.
func TestReadinessProbeFitsReadyz(t *testing.T) {
	m := load(t)
	if len(m.deployments) != 1 || len(m.configMaps) != 1 {
		t.Fatal("manifests incomplete (see TestManifestsDecodeStrictly)")
	}
	c := m.deployments[0].Spec.Template.Spec.Containers[0]
	p := c.ReadinessProbe
	if p == nil {
		t.Fatal("no readiness probe")
	}
	timeout := seconds(p.TimeoutSeconds, 1) // Kubernetes' defaults
	period := seconds(p.PeriodSeconds, 10)
	threshold := int(p.FailureThreshold)
	if threshold == 0 {
		threshold = 3
	}
	if timeout < 2*facade.ReadyRedisWait {
		t.Errorf("readiness timeout %s: /readyz may take %s; allow twice that", timeout, facade.ReadyRedisWait)
	}
	if threshold < 2 {
		t.Errorf("readiness failureThreshold %d: one slow answer takes the pod out of the Service", threshold)
	}
	drain, err := time.ParseDuration(m.configMaps[0].Data["FACADE_DRAIN_DELAY"])
	if err != nil {
		t.Fatalf("FACADE_DRAIN_DELAY: %v", err)
	}
	if out := time.Duration(threshold)*period + timeout; out > drain {
		t.Errorf("a draining pod is out of the Service after up to %s (%d probes %s apart, %s timeout), later than FACADE_DRAIN_DELAY %s: requests reach it after it stopped taking them",
			out, threshold, period, timeout, drain)
	}
}

func seconds(v, def int32) time.Duration {
	if v == 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

// TestPolicyComesFromAConfigMap: FACADE_MODEL and FACADE_POLICY name the
// files of the ConfigMap facade-policy, mounted whole (a subPath mount
// never sees the kubelet's updates, so the policy would never reload) and
// read-only; the example ConfigMap holds the repository's own files.
func TestPolicyComesFromAConfigMap(t *testing.T) {
	m, ex := load(t), loadExamples(t)
	if len(m.deployments) != 1 || len(m.configMaps) != 1 || len(ex.configMaps) != 1 {
		t.Fatal("manifests incomplete (see TestManifestsDecodeStrictly)")
	}
	pod, settings, pol := m.deployments[0].Spec.Template.Spec, m.configMaps[0].Data, ex.configMaps[0]
	c := pod.Containers[0]
	var volume string
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == pol.Name {
			volume = v.Name
		}
	}
	var mount *corev1.VolumeMount
	for i, vm := range c.VolumeMounts {
		if vm.Name == volume {
			mount = &c.VolumeMounts[i]
		}
	}
	if volume == "" || mount == nil || mount.SubPath != "" || !mount.ReadOnly {
		t.Fatalf("the ConfigMap %s is not mounted whole and read-only: volume %q, mount %+v", pol.Name, volume, mount)
	}
	for setting, file := range map[string]string{"FACADE_MODEL": "model.conf", "FACADE_POLICY": "policy.csv"} {
		if got := settings[setting]; got != path.Join(mount.MountPath, file) {
			t.Errorf("%s = %q, want %s in the mounted ConfigMap", setting, got, path.Join(mount.MountPath, file))
		}
		repo, err := os.ReadFile("../" + file)
		if err != nil {
			t.Fatal(err)
		}
		if pol.Data[file] != string(repo) {
			t.Errorf("examples/: the ConfigMap's %s is not the repository's %s", file, file)
		}
	}
}

// TestTrustedProxiesNameTheIngress: FACADE_TRUSTED_PROXIES in the shipped
// ConfigMap is a narrow range (an ingress controller's pods), not a /8:
// every address it holds may say who the client is, and the failed-login
// limit counts by that.
func TestTrustedProxiesNameTheIngress(t *testing.T) {
	m := load(t)
	if len(m.configMaps) != 1 {
		t.Fatal("manifests incomplete (see TestManifestsDecodeStrictly)")
	}
	v := m.configMaps[0].Data["FACADE_TRUSTED_PROXIES"]
	for _, entry := range strings.Split(v, ",") {
		_, n, err := net.ParseCIDR(strings.TrimSpace(entry))
		if err != nil {
			t.Fatalf("FACADE_TRUSTED_PROXIES %q: %v", v, err)
		}
		ones, bits := n.Mask.Size()
		if bits-ones > 8 {
			t.Errorf("FACADE_TRUSTED_PROXIES holds %s: %d addresses; name the ingress controller's (at most 256)", n, 1<<(bits-ones))
		}
	}
}
