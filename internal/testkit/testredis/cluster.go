package testredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots Redis Cluster divides keys into.
const clusterSlots = 16384

// clusterReadyWithin bounds how long the nodes may take to agree that every
// slot is served.
const clusterReadyWithin = 20 * time.Second

// launchAttempts: a free port found by listening and closing may be taken
// by another process before redis-server binds it; a node then gets fresh
// ports and another try.
const launchAttempts = 3

// Cluster is a Redis Cluster of masters only (no replicas), each a private
// redis-server on loopback ports. Its zero value is not usable: create it
// with StartCluster.
type Cluster struct {
	Addrs []string // client addresses of the nodes, "127.0.0.1:port"
	nodes []*Server
}

// StartCluster launches masters redis-server processes in cluster mode,
// gives each an equal share of the 16384 slots, joins them into one cluster
// and waits until every node reports cluster_state:ok. Every node is
// stopped when the test ends (and dies with the test binary in any case).
// No redis-cli is needed: slots and the handshake go through go-redis.
func StartCluster(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	if masters < 1 {
		tb.Fatalf("testredis: a cluster needs at least one master, got %d", masters)
	}
	c := &Cluster{}
	tb.Cleanup(c.Stop)
	busPorts := make([]string, masters)
	for i := range masters {
		node, bus, err := startClusterNode(tb.TempDir())
		if err != nil {
			tb.Fatalf("testredis: cluster node %d: %v", i, err)
		}
		c.nodes = append(c.nodes, node)
		c.Addrs = append(c.Addrs, node.Addr)
		busPorts[i] = bus
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWithin)
	defer cancel()
	if err := c.form(ctx, busPorts); err != nil {
		tb.Fatalf("testredis: form cluster: %v", err)
	}
	if err := c.waitOK(ctx); err != nil {
		tb.Fatalf("testredis: %v", err)
	}
	return c
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
}

// startClusterNode launches one cluster-mode redis-server in dir and
// returns it with its cluster bus port. The bus port is chosen explicitly
// (cluster-port) because the default, client port + 10000, may be taken or
// beyond 65535 for an ephemeral client port.
func startClusterNode(dir string) (*Server, string, error) {
	var err error
	for range launchAttempts {
		var ports []int
		if ports, err = freePorts(2); err != nil {
			return nil, "", err
		}
		port, bus := strconv.Itoa(ports[0]), strconv.Itoa(ports[1])
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", port), dir: dir, extraArgs: []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+port+".conf"),
			"--cluster-node-timeout", "2000",
			"--cluster-port", bus,
		}}
		if err = s.launch(); err == nil {
			return s, bus, nil
		}
		s.Stop()
	}
	return nil, "", err
}

// form gives node i the i-th equal share of the slots, a distinct config
// epoch (as redis-cli --cluster create does, so no epoch collision has to
// be resolved) and introduces every other node to node 0; gossip does the
// rest.
func (c *Cluster) form(ctx context.Context, busPorts []string) error {
	n := len(c.nodes)
	for i, node := range c.nodes {
		first, last := i*clusterSlots/n, (i+1)*clusterSlots/n-1
		err := withNode(node.Addr, func(rc *redis.Client) error {
			if err := rc.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
				return fmt.Errorf("%s: add slots %d-%d: %w", node.Addr, first, last, err)
			}
			if err := rc.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
				return fmt.Errorf("%s: set config epoch: %w", node.Addr, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return withNode(c.nodes[0].Addr, func(rc *redis.Client) error {
		for i, node := range c.nodes[1:] {
			host, port, _ := net.SplitHostPort(node.Addr)
			if err := rc.Do(ctx, "CLUSTER", "MEET", host, port, busPorts[i+1]).Err(); err != nil {
				return fmt.Errorf("meet %s: %w", node.Addr, err)
			}
		}
		return nil
	})
}

// waitOK polls CLUSTER INFO on every node until all of them see every node
// and every slot served, or ctx ends.
func (c *Cluster) waitOK(ctx context.Context) error {
	want := []string{"cluster_state:ok", "cluster_slots_ok:" + strconv.Itoa(clusterSlots),
		"cluster_known_nodes:" + strconv.Itoa(len(c.nodes))}
	for _, node := range c.nodes {
		err := withNode(node.Addr, func(rc *redis.Client) error {
			var info string
			for {
				info, _ = rc.ClusterInfo(ctx).Result()
				if hasAllLines(info, want) {
					return nil
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("cluster node %s not ready within %s; CLUSTER INFO:\n%s",
						node.Addr, clusterReadyWithin, info)
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func hasAllLines(info string, want []string) bool {
	lines := map[string]bool{}
	for _, l := range strings.Split(info, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, w := range want {
		if !lines[w] {
			return false
		}
	}
	return true
}

// withNode runs f with a plain (non-cluster) client on one node.
func withNode(addr string, f func(*redis.Client) error) error {
	rc := redis.NewClient(&redis.Options{Addr: addr})
	return errors.Join(f(rc), rc.Close())
}

// freePorts returns n distinct free loopback ports: all listeners stay open
// until every port is chosen, so none is handed out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
