// Command cuckoo_go times github.com/seiflotfy/cuckoofilter, the Go cuckoo
// filter the seeds cite, as bench/cuckoo_bench.c times amq's layouts, so that
// bench/go/run.sh can print the two side by side (issue #34). It is built
// offline from Debian's golang-github-seiflotfy-cuckoofilter-dev (bench/build.mk).
//
// Usage: cuckoo_go n. The filter is NewFilter(n): 4 one-byte fingerprints per
// bucket, buckets rounded up to a power of two. It gets the int64 values
// 0..n-1, each as its 8 little-endian bytes (the library hashes them with
// metro hash); then min(n, 10M) of them and 10M absent values, n.., in the
// scattered order cuckoo_bench uses. Prints one line of name=value pairs.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"time"

	cuckoo "github.com/seiflotfy/cuckoofilter"
)

// probes is how many present (at most n) and absent values are probed, as in
// cuckoo_bench.c.
const probes = 10000000

// gcd is the greatest common divisor of a and b.
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// scatterStep is cuckoo_bench.c's step: near range / golden ratio and coprime
// with range, so v -> v + step (mod range) visits all of [0, range) once.
func scatterStep(r uint64) uint64 {
	step := (uint64(float64(r)*0.6180339887) | 1) % r
	for gcd(step, r) != 1 {
		step++
	}
	return step
}

// probe looks up count values base + (i * step mod r) and returns the ns per
// lookup and how many were reported present.
func probe(f *cuckoo.Filter, base int64, r, count uint64) (float64, uint64) {
	step, v, found := scatterStep(r), uint64(0), uint64(0)
	var key [8]byte
	start := time.Now()
	for i := uint64(0); i < count; i++ {
		binary.LittleEndian.PutUint64(key[:], uint64(base+int64(v)))
		if f.Lookup(key[:]) {
			found++
		}
		v += step
		if v >= r {
			v -= r
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(count), found
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cuckoo_go n")
		os.Exit(2)
	}
	nf, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil || nf < 1 || nf > 1e10 {
		fmt.Fprintf(os.Stderr, "cuckoo_go: n must be 1 to 1e10, got %s\n", os.Args[1])
		os.Exit(2)
	}
	n := uint64(nf)

	f := cuckoo.NewFilter(uint(n))
	var key [8]byte
	failed := uint64(0)
	start := time.Now()
	for v := uint64(0); v < n; v++ {
		binary.LittleEndian.PutUint64(key[:], v)
		if !f.Insert(key[:]) {
			failed++
		}
	}
	addNs := float64(time.Since(start).Nanoseconds()) / float64(n)

	present := n
	if present > probes {
		present = probes
	}
	presentNs, hits := probe(f, 0, n, present)
	absentNs, falseHits := probe(f, int64(n), probes, probes)
	bytes := uint64(len(f.Encode())) // one byte per slot
	fmt.Printf("row name=seiflotfy n=%d bytes=%d load=%.4f add_ns=%.2f present_ns=%.2f "+
		"absent_ns=%.2f fpr=%.5f failed_adds=%d false_negatives=%d\n",
		n, bytes, float64(f.Count())/float64(bytes), addNs, presentNs, absentNs,
		float64(falseHits)/probes, failed, present-hits)
}
