package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// shutdownTimeout is how long the service gives in-flight requests after
// the drain delay, plus the last write of the policy usage after them
// (5 s at most; cmd/facade/serve.go); the pod's grace period must cover
// it all, or the kubelet kills requests in flight and the last counts.
const shutdownTimeout = 25*time.Second + 5*time.Second

// manifests are every object of one directory, decoded strictly into the
// API's Go types: a field the API does not have (a typo, a wrong level)
// fails here instead of being dropped silently by kubectl.
type manifests struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	pdbs        []*policyv1.PodDisruptionBudget
	configMaps  []*corev1.ConfigMap
	secrets     []*corev1.Secret
}

// load reads what `kubectl apply -f deploy/kubernetes/` applies: the
// files of kubernetes/, not of its subdirectories (no -R).
func load(t *testing.T) manifests { return loadDir(t, "kubernetes") }

// loadExamples reads kubernetes/examples/: objects shown, never applied
// (the Secret, whose real values ops create by hand).
func loadExamples(t *testing.T) manifests { return loadDir(t, "kubernetes/examples") }

func loadDir(t *testing.T, dir string) manifests {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests under %s/: %v", dir, err)
	}
	var m manifests
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			if err := m.add(doc); err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
			}
		}
	}
	return m
}

func (m *manifests) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		d := &appsv1.Deployment{}
		m.deployments, obj = append(m.deployments, d), d
	case "v1 Service":
		s := &corev1.Service{}
		m.services, obj = append(m.services, s), s
	case "policy/v1 PodDisruptionBudget":
		p := &policyv1.PodDisruptionBudget{}
		m.pdbs, obj = append(m.pdbs, p), p
	case "v1 ConfigMap":
		c := &corev1.ConfigMap{}
		m.configMaps, obj = append(m.configMaps, c), c
	case "v1 Secret":
		s := &corev1.Secret{}
		m.secrets, obj = append(m.secrets, s), s
	default:
		return fmt.Errorf("unexpected kind %q %q", tm.APIVersion, tm.Kind)
	}
	return yaml.UnmarshalStrict(doc, obj)
}

// TestManifestsDecodeStrictly: every manifest is an object of the
// Kubernetes API with no field it does not know, and the set is complete:
// the applied directory holds no Secret and no policy (applying the
// manifests after creating the real ones, as docs/operations.md says,
// would overwrite them with placeholders and the demo's grants); the
// examples are beside them, in examples/.
func TestManifestsDecodeStrictly(t *testing.T) {
	m, ex := load(t), loadExamples(t)
	if len(m.deployments) != 1 || len(m.services) != 1 || len(m.pdbs) != 1 || len(m.configMaps) != 1 || len(m.secrets) != 0 {
		t.Fatalf("want one Deployment, Service, PodDisruptionBudget and ConfigMap and no Secret in kubernetes/; have %d, %d, %d, %d, %d",
			len(m.deployments), len(m.services), len(m.pdbs), len(m.configMaps), len(m.secrets))
	}
	if len(ex.secrets) != 1 || len(ex.configMaps) != 1 || len(ex.deployments)+len(ex.services)+len(ex.pdbs) != 0 {
		t.Fatalf("want the example Secret and the policy's ConfigMap alone in kubernetes/examples/; have %d Secrets, %d ConfigMaps and %d other objects",
			len(ex.secrets), len(ex.configMaps), len(ex.deployments)+len(ex.services)+len(ex.pdbs))
	}
	// The strictness itself: a misplaced field is refused.
	bad := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n")
	var extra manifests
	if err := extra.add(bad); err == nil {
		t.Fatal("a Deployment with an unknown field (replica) decoded")
	}
}

// TestDeploymentRunsTheWayOpsExpect: probes on the ops port, resources, a
// non-root read-only container, a grace period longer than the drain,
// settings from the ConfigMap and secrets as files from the Secret.
func TestDeploymentRunsTheWayOpsExpect(t *testing.T) {
	m, ex := load(t), loadExamples(t)
	if len(m.deployments) != 1 || len(m.configMaps) != 1 || len(ex.secrets) != 1 {
		t.Fatal("manifests incomplete (see TestManifestsDecodeStrictly)")
	}
	d, cm, sec := m.deployments[0], m.configMaps[0], ex.secrets[0]
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if i := strings.LastIndex(c.Image, ":"); i < 0 || strings.HasSuffix(c.Image, ":latest") || strings.Contains(c.Image[i:], "/") {
		t.Errorf("image %q: pin a version, never latest", c.Image)
	}
	opsAddr := cm.Data["FACADE_OPS_ADDR"]
	opsPort := containerPort(c, "ops")
	if opsPort == 0 || opsAddr != fmt.Sprintf(":%d", opsPort) || cm.Data["FACADE_ADDR"] == opsAddr {
		t.Errorf("ops port %d, FACADE_OPS_ADDR %q, FACADE_ADDR %q: the ops port must be its own and the one the container declares",
			opsPort, opsAddr, cm.Data["FACADE_ADDR"])
	}
	for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != name || probe.HTTPGet.Port.String() != "ops" {
			t.Errorf("probe for %s: %+v; want an HTTP GET of %s on the ops port", name, probe, name)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
	}
	psc, csc := pod.SecurityContext, c.SecurityContext
	if psc == nil || csc == nil || !isTrue(psc.RunAsNonRoot) || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		!isTrue(csc.ReadOnlyRootFilesystem) || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
		csc.Capabilities == nil || len(csc.Capabilities.Drop) != 1 || csc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("security context: pod %+v, container %+v; want non-root, read-only root, no escalation, no capabilities", psc, csc)
	}
	if !mounted(c, "/tmp") {
		t.Error("nothing writable at /tmp: the root filesystem is read-only")
	}
	drain, err := time.ParseDuration(cm.Data["FACADE_DRAIN_DELAY"])
	if err != nil {
		drain = 5 * time.Second // the service's default
	}
	if grace := pod.TerminationGracePeriodSeconds; grace == nil || time.Duration(*grace)*time.Second <= drain+shutdownTimeout {
		t.Errorf("terminationGracePeriodSeconds %v: must be longer than FACADE_DRAIN_DELAY (%s) + %s of shutdown", d.Spec.Template.Spec.TerminationGracePeriodSeconds, drain, shutdownTimeout)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != cm.Name {
		t.Errorf("settings not from the ConfigMap %s: %+v", cm.Name, c.EnvFrom)
	}
	checkSecretsAsFiles(t, pod, c, sec)
}

// checkSecretsAsFiles: every secret setting the Deployment uses is a
// FACADE_*_FILE naming a key of the (example) Secret where it is mounted,
// and no secret is in the environment or the ConfigMap.
func checkSecretsAsFiles(t *testing.T, pod corev1.PodSpec, c corev1.Container, sec *corev1.Secret) {
	t.Helper()
	var mountPath string
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == sec.Name {
			for _, vm := range c.VolumeMounts {
				if vm.Name == v.Name && vm.ReadOnly {
					mountPath = vm.MountPath
				}
			}
		}
	}
	if mountPath == "" {
		t.Fatalf("the Secret %s is not mounted read-only", sec.Name)
	}
	files := 0
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("%s comes from the Secret as an environment variable: mount it as a file (%s_FILE)", e.Name, e.Name)
		}
		if !strings.HasSuffix(e.Name, "_FILE") {
			continue
		}
		key, ok := strings.CutPrefix(e.Value, mountPath+"/")
		if _, inSecret := sec.StringData[key]; !ok || !inSecret {
			t.Errorf("%s=%s is not a key of the Secret %s mounted at %s", e.Name, e.Value, sec.Name, mountPath)
		}
		files++
	}
	for _, name := range []string{"FACADE_JWT_SECRET_FILE", "FACADE_REDIS_URL_FILE", "FACADE_UPSTREAM_TOKEN_FILE"} {
		found := false
		for _, e := range c.Env {
			found = found || e.Name == name
		}
		if !found {
			t.Errorf("%s not set: that secret would have to be in the environment", name)
		}
	}
}

// TestServiceAndBudgetSelectThePods: the Service and the disruption
// budget select the Deployment's pods, the Service reaches the API port,
// and a drain leaves a pod serving.
func TestServiceAndBudgetSelectThePods(t *testing.T) {
	m := load(t)
	if len(m.deployments) != 1 || len(m.services) != 1 || len(m.pdbs) != 1 {
		t.Fatal("manifests incomplete (see TestManifestsDecodeStrictly)")
	}
	d, svc, pdb := m.deployments[0], m.services[0], m.pdbs[0]
	labels := d.Spec.Template.Labels
	for k, v := range svc.Spec.Selector {
		if labels[k] != v {
			t.Errorf("the Service selects %s=%s; the pods have %v", k, v, labels)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("Service ports %+v: want the API port (http) only", svc.Spec.Ports)
	}
	sel, err := metav1.LabelSelectorAsMap(pdb.Spec.Selector)
	if err != nil || len(sel) == 0 {
		t.Fatalf("budget selector %v: %v", pdb.Spec.Selector, err)
	}
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("the budget selects %s=%s; the pods have %v", k, v, labels)
		}
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || d.Spec.Replicas == nil ||
		int(*d.Spec.Replicas) <= pdb.Spec.MinAvailable.IntValue() {
		t.Errorf("minAvailable %v with %v replicas: a drain must be possible and leave a pod serving", pdb.Spec.MinAvailable, d.Spec.Replicas)
	}
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func mounted(c corev1.Container, path string) bool {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == path && !vm.ReadOnly {
			return true
		}
	}
	return false
}

func isTrue(b *bool) bool { return b != nil && *b }
