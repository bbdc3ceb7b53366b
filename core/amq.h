/*
 * amq.h - public API of the amq core: value hashing, Bloom and cuckoo filters,
 * their portable serialized form, and the builders aggregates use.
 *
 * The core knows nothing of SQLite or PostgreSQL. It never prints, never exits
 * and keeps no global mutable state. Every fallible function returns an
 * amq_status and fills an amq_error whose message and hint the adapters pass
 * on unchanged; every allocation goes through an amq_allocator supplied by the
 * caller. A filter is always one contiguous byte buffer in the format of
 * docs/FORMAT.md; amq_filter is a parsed view over such a buffer.
 */
#ifndef AMQ_H
#define AMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AMQ_VERSION "0.6.0"
#define AMQ_HEADER_BYTES 64
/* Largest filter, header included: 1 GiB less 64 bytes, so that it fits a
 * PostgreSQL varlena. (SQLite's default blob limit is 10^9 bytes; its adapter
 * reports that limit for the few sizes in between.) */
#define AMQ_MAX_FILTER_BYTES (((size_t)1 << 30) - 64)
/* Seed of every filter built through SQL, and of amq_hash(). */
#define AMQ_DEFAULT_SEED 0
#define AMQ_BLOOM_MAX_HASHES 30
/* A blocked filter puts each hash in its own one of the block's 8 words. */
#define AMQ_BLOOM_BLOCKED_MAX_HASHES 8
/* A counting Bloom filter's counters saturate here and then never change. */
#define AMQ_COUNTING_MAX 15
/* A scalable Bloom filter's links grow by expansion (1..32, default 2), at
 * most 64 links. */
#define AMQ_SCALABLE_DEFAULT_EXPANSION 2
#define AMQ_SCALABLE_MAX_EXPANSION 32
#define AMQ_SCALABLE_MAX_LINKS 64
/* amq_filter_info_json never needs more than this (a scalable chain lists
 * its links). */
#define AMQ_INFO_MAX 12288
#define AMQ_CUCKOO_MIN_FINGERPRINT 4
#define AMQ_CUCKOO_MAX_FINGERPRINT 32
/* The hint of a cuckoo add refused because the value's two buckets hold
 * nothing but its fingerprint (AMQ_FILTER_FULL, "cuckoo filter already holds
 * this value 8 times, ..."): no walk and no larger table stores another copy.
 * Callers that word advice of their own (cuckoo_add_agg, Python) match it. */
#define AMQ_CUCKOO_COPIES_HINT                                                                     \
	"use cuckoo_add_unique to add a value once, or a counting bloom filter "                   \
	"(bloom_new(n, p, 'counting')) to count it"

typedef enum amq_status {
	AMQ_OK = 0,
	AMQ_INVALID_ARGUMENT, /* bad fpr, capacity, layout, ... (SQLSTATE 22023) */
	AMQ_INVALID_FILTER,   /* bytes are not a valid filter (22P02) */
	AMQ_WRONG_KIND,	      /* a cuckoo filter where a bloom one is expected (22023) */
	AMQ_INCOMPATIBLE,     /* two filters or builders with different parameters (22023) */
	AMQ_FILTER_FULL,      /* cuckoo or dleft add found no free slot (54000) */
	AMQ_TOO_LARGE,	      /* the filter would exceed AMQ_MAX_FILTER_BYTES (54000) */
	AMQ_NO_MEMORY,	      /* the allocator returned NULL (53200) */
	AMQ_INTERRUPTED,      /* the allocator's interrupted hook said stop (57014) */
	AMQ_SPILL_FAILED      /* a temporary file could not be written or read (58030) */
} amq_status;

/* What went wrong, in words the adapters show as they are: message is
 * lower-case without a trailing period; hint says what to do (may be empty). */
typedef struct amq_error {
	amq_status status;
	char message[256];
	char hint[160];
} amq_error;

/*
 * Temporary files of the engine's, for a collecting builder past its working
 * memory (build/spill.c): PostgreSQL's BufFile (temp_tablespaces,
 * temp_file_limit, log_temp_files apply), a temporary file of SQLite's VFS
 * (SQLite's temporary directory), Python's tempfile directory. Each sorted
 * run a builder writes is one file, which the builder closes (and the engine
 * removes) when it merges the run or is freed; an engine whose errors do not
 * return (PostgreSQL) removes what is left when its query ends.
 *
 * memory is the working memory of one builder in bytes (work_mem), at least
 * AMQ_SPILL_MIN_MEMORY. create returns a new empty file (NULL, err set, on
 * failure); write appends to it; read fills buf from offset, all of it;
 * close removes it. Each failure is AMQ_SPILL_FAILED with the engine's words.
 *
 * An engine whose builders change processes (PostgreSQL's parallel workers
 * pass their states to the leader) also hands files over, so a serialized
 * state carries its runs by name instead of by content (amq_builder_serialize):
 * hand_over writes file's token (AMQ_SPILL_TOKEN bytes) and gives the file
 * up, closed but kept; take_over opens the file of a token in the process
 * that reads the state (NULL, err set, if it is not one of its query's), to
 * read and close as any other. A file handed over and never taken is the
 * engine's to remove (PostgreSQL: at the leader's end of transaction). NULL
 * both where states never leave their process.
 */
#define AMQ_SPILL_TOKEN 48
typedef struct amq_spill {
	size_t memory;
	void *ctx;
	void *(*create)(void *ctx, amq_error *err);
	amq_status (*write)(void *ctx, void *file, const void *buf, size_t len, amq_error *err);
	amq_status (*read)(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			   amq_error *err);
	void (*close)(void *ctx, void *file);
	amq_status (*hand_over)(void *ctx, void *file, uint8_t token[AMQ_SPILL_TOKEN],
				amq_error *err);
	void *(*take_over)(void *ctx, const uint8_t token[AMQ_SPILL_TOKEN], amq_error *err);
} amq_spill;

/* The least working memory a builder takes (PostgreSQL's least work_mem),
 * and what SQLite and Python give one unless told otherwise. */
#define AMQ_SPILL_MIN_MEMORY ((size_t)64 << 10)
#define AMQ_SPILL_DEFAULT_MEMORY ((size_t)64 << 20)

/*
 * Allocation hook: alloc returns NULL on failure; free accepts NULL. With it
 * travels the caller's interrupt check: core's long loops (clearing a large
 * filter, sorting and counting collected hashes, inserting them) call
 * interrupted every AMQ_INTERRUPT_EVERY steps of work (a few milliseconds),
 * and when it returns true stop with AMQ_INTERRUPTED, having freed what they
 * allocated. It may also not return (PostgreSQL's CHECK_FOR_INTERRUPTS
 * raises): core then holds nothing but memory from alloc. NULL: never. And
 * the engine's temporary files, for builders (NULL: never spill, keep every
 * collected hash in memory).
 */
typedef struct amq_allocator {
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr);
	void *ctx;
	bool (*interrupted)(void *ctx);
	const amq_spill *spill;
} amq_allocator;

/* Steps of work (hashes sorted or inserted, 64-byte lines cleared) between
 * two calls of an allocator's interrupted hook: a few milliseconds. */
#define AMQ_INTERRUPT_EVERY ((size_t)1 << 18)

/* aligned_alloc(64)/free, for tests, benchmarks and tools. */
extern const amq_allocator amq_malloc_allocator;

/* The on-disk kind codes (docs/FORMAT.md). Each variant's row carries its
 * own; these name the two kinds the adapters and tests call by name. */
typedef enum amq_kind { AMQ_KIND_BLOOM = 1, AMQ_KIND_CUCKOO = 2 } amq_kind;

typedef enum amq_layout {
	AMQ_LAYOUT_CLASSIC = 0,	   /* bloom: k bits anywhere in m; cuckoo: b = 4 ('b4') */
	AMQ_LAYOUT_BLOCKED = 1,	   /* bloom: all k bits in one 512-bit block */
	AMQ_LAYOUT_COUNTING = 2,   /* bloom: classic positions, a 4-bit counter each */
	AMQ_LAYOUT_SCALABLE = 3,   /* bloom: a growing chain of blocked links */
	AMQ_LAYOUT_CUCKOO_B2 = 4,  /* cuckoo: buckets of 2 fingerprints ('b2') */
	AMQ_LAYOUT_CUCKOO_B8 = 5,  /* cuckoo: buckets of 8 fingerprints ('b8') */
	AMQ_LAYOUT_SEMISORTED = 6, /* cuckoo: b = 4, semi-sorted ('semisorted') */
	AMQ_LAYOUT_DLEFT = 7	   /* bloom: d-left counting ('dleft') */
} amq_layout;

/*
 * The family of a value: which tag of docs/HASHING.md its hash starts with,
 * integers and reals together (3 = 3.0). Values of different families never
 * hash alike, so a probe of a family a filter does not hold is a mistake
 * (the text '42' against a filter of integers), and core says so instead of
 * answering "no". Bits, so that a filter's families are a set.
 */
typedef enum amq_family {
	AMQ_FAMILY_NUMBER = 1, /* integers, reals, booleans */
	AMQ_FAMILY_TEXT = 2,   /* text, and what hashes as text: dates, times, uuids */
	AMQ_FAMILY_BLOB = 4    /* blobs, bytea */
} amq_family;
/* Every family bit a header may hold. */
#define AMQ_FAMILIES_ALL 7
/* amq_filter.families of a filter of format version 1 to 3, written before
 * filters recorded their families: unknown, so nothing is checked. */
#define AMQ_FAMILIES_UNKNOWN 0xFF
/* The first format version that records families (header byte 44). */
#define AMQ_FAMILIES_FORMAT_VERSION 4

/*
 * A parsed view of a serialized filter. bytes/size cover the whole buffer;
 * the other fields mirror the header. Functions that change a filter update
 * the payload and these fields; amq_filter_seal() writes them back to the
 * header together with a fresh checksum.
 */
typedef struct amq_filter {
	uint8_t *bytes;
	size_t size;
	amq_kind kind;
	amq_layout layout;
	uint32_t hashes; /* bloom: k; cuckoo: fingerprint bits f */
	uint64_t seed;
	uint64_t cells;	  /* bloom: bits m; cuckoo: buckets */
	uint64_t items;	  /* values added (bloom: adds; cuckoo: occupied slots) */
	uint8_t *payload; /* bytes + AMQ_HEADER_BYTES */
	uint64_t payload_size;
	/* The families of the values added (amq_family bits); 0: none yet, so
	 * the first add decides; AMQ_FAMILIES_UNKNOWN: an older format, sealed
	 * again in its own version. */
	uint8_t families;
} amq_filter;

/* ---- errors (error.c) ---- */

/* Fills err (when not NULL) and returns status. printf-style message. */
amq_status amq_fail(amq_error *err, amq_status status, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The SQLSTATE of a status, five characters (the codes above; "XX000" for
 * AMQ_OK, which is no error): PostgreSQL raises it, Python's amq.Error
 * carries it, so both say one code for one failure. */
const char *amq_status_sqlstate(amq_status status);

/* ---- value hashing (hash.c, docs/HASHING.md) ---- */

uint64_t amq_hash_int(int64_t value, uint64_t seed);
/* Integral doubles within int64 hash as that integer; -0.0 as 0; NaNs as one NaN. */
uint64_t amq_hash_double(double value, uint64_t seed);
/* text must be UTF-8. */
uint64_t amq_hash_text(const void *text, size_t len, uint64_t seed);
uint64_t amq_hash_blob(const void *blob, size_t len, uint64_t seed);

/* One value, as an adapter decoded it: what it hashes as, and what the family
 * check shows of it in a message. */
typedef struct amq_value {
	amq_family family;
	bool integral;	   /* a number: integer holds it (else real) */
	int64_t integer;   /* integral number */
	double real;	   /* other number */
	const void *bytes; /* text (UTF-8) or blob, len bytes; NULL when len is 0 */
	size_t len;
} amq_value;

/* amq_value constructors, for adapters and tests. */
static inline amq_value amq_value_integer(int64_t i)
{
	return (amq_value){.family = AMQ_FAMILY_NUMBER, .integral = true, .integer = i};
}
static inline amq_value amq_value_real(double d)
{
	return (amq_value){.family = AMQ_FAMILY_NUMBER, .real = d};
}
static inline amq_value amq_value_text(const void *utf8, size_t len)
{
	return (amq_value){.family = AMQ_FAMILY_TEXT, .bytes = utf8, .len = len};
}
static inline amq_value amq_value_blob(const void *blob, size_t len)
{
	return (amq_value){.family = AMQ_FAMILY_BLOB, .bytes = blob, .len = len};
}

/* The hash of v with seed: amq_hash_int, _double, _text or _blob. A probe
 * that runs once per row hashes the engine's value directly instead (an
 * amq_value built and read back costs a store-forwarding stall). */
static inline uint64_t amq_value_hash(const amq_value *v, uint64_t seed)
{
	switch (v->family) {
	case AMQ_FAMILY_NUMBER:
		return v->integral ? amq_hash_int(v->integer, seed)
				   : amq_hash_double(v->real, seed);
	case AMQ_FAMILY_TEXT:
		return amq_hash_text(v->bytes, v->len, seed);
	case AMQ_FAMILY_BLOB:
		break;
	}
	return amq_hash_blob(v->bytes, v->len, seed);
}

/* ---- value families of a filter (families.c, docs/FORMAT.md) ---- */

/* Whose words a hint uses: SQL's casts, or Python's conversions. */
typedef enum amq_dialect { AMQ_DIALECT_SQL, AMQ_DIALECT_PYTHON } amq_dialect;

/* True when f takes a value of family: f holds that family, holds none yet,
 * or is of an older format (unknown families). One compare per call. */
static inline bool amq_filter_takes(const amq_filter *f, amq_family family)
{
	return (f->families & (uint8_t)family) != 0 || f->families == 0;
}

/* Records that f holds a value of family: after an add that
 * amq_filter_takes allowed. Unknown families stay unknown. */
static inline void amq_filter_note_family(amq_filter *f, amq_family family)
{
	f->families |= (uint8_t)family;
}

/*
 * AMQ_OK when f takes v's family (amq_filter_takes); otherwise
 * AMQ_INVALID_ARGUMENT with "<function>: <argument>: the filter holds
 * numbers, got text '42'" and a hint that shows the cast in the dialect's
 * words ("cast the value (CAST('42' AS INTEGER), '42'::int8)"). Every probe,
 * add, delete and count of a user's value runs it; join filters, which are no
 * user's calls, never do.
 */
amq_status amq_check_family(const amq_filter *f, const amq_value *v, const char *function,
			    const char *argument, amq_dialect dialect, amq_error *err);

/* The format version f is sealed with: AMQ_FAMILIES_FORMAT_VERSION when its
 * families are known, else its layout's first version (as amq 0.3.0 wrote). */
unsigned amq_filter_format_version(const amq_filter *f);

/* Writes f's families as a JSON value into out (cap bytes, at least 48):
 * ["numbers","text"], [] for none yet, null when unknown. */
void amq_families_json(const amq_filter *f, char *out, size_t cap);

/* ---- argument checks shared by both adapters (params.c) ---- */

/* fpr must be a number strictly between 0 and 1. */
amq_status amq_check_fpr(double fpr, amq_error *err);
/* capacity must be at least 1. */
amq_status amq_check_capacity(int64_t capacity, amq_error *err);
/* The layout a filter of this kind for this fpr gets when SQL names none:
 * blocked for Bloom filters (one cache line per probe); for cuckoo filters,
 * of 'b2', 'b4' and 'b8', the one with the fewest bits per item, fingerprint
 * bits / target load, at fpr ('b4' on a tie). */
amq_layout amq_default_layout(amq_kind kind, double fpr);
/* Parses a layout name of the given kind: 'blocked', 'classic', 'counting'
 * or 'scalable' for Bloom filters, 'b2', 'b4', 'b8' or 'semisorted' for
 * cuckoo filters. */
amq_status amq_parse_layout(amq_kind kind, const char *name, size_t len, amq_layout *out,
			    amq_error *err);
/* What to pass as a layout of kind: the hint of an unknown layout name. */
const char *amq_layouts_hint(amq_kind kind);

/* ---- the serialized form (format.c, docs/FORMAT.md) ---- */

/* Parses and checks the header against size; does not read the payload or
 * verify the checksum. buf must stay alive and unmoved while f is used;
 * read-only functions never write through it. */
amq_status amq_filter_open(amq_filter *f, const void *buf, size_t size, amq_error *err);
/* O(size) check: checksum, zero padding, and (cuckoo) item count. */
amq_status amq_filter_verify(const amq_filter *f, amq_error *err);
/* amq_filter_open, then amq_filter_verify, for a filter of either kind, with
 * messages that name no function or argument: exactly what SQL says of the
 * same bytes after its "<function>: <argument>: " (the Python package's
 * Filter(data)). */
amq_status amq_filter_check(amq_filter *f, const void *buf, size_t size, amq_error *err);
/*
 * What an adapter calls for a filter argument: open, then check the kind,
 * then verify (skipped when trusted: these very bytes passed before), so
 * both engines report the same fault for the same bytes. Messages start with
 * "<function>: <argument>: ", e.g. "bloom_union: second filter: checksum
 * mismatch".
 */
amq_status amq_filter_read(amq_filter *f, const void *buf, size_t size, amq_kind kind, bool trusted,
			   const char *function, const char *argument, amq_error *err);
/* Writes the header fields and checksum into f->bytes. */
void amq_filter_seal(amq_filter *f);
/* AMQ_WRONG_KIND unless f is of the kind named. */
amq_status amq_filter_expect(const amq_filter *f, amq_kind kind, amq_error *err);
/* A new buffer holding a copy of src; dst views it. */
amq_status amq_filter_clone(amq_filter *dst, const amq_filter *src, const amq_allocator *a,
			    amq_error *err);
/* Frees a filter whose buffer came from a create/clone call with allocator a. */
void amq_filter_free(amq_filter *f, const amq_allocator *a);
/* Describes f as one JSON object; returns the length written (truncated to
 * cap - 1 bytes, always NUL-terminated when cap > 0); AMQ_INFO_MAX bytes always
 * suffice. */
size_t amq_filter_info_json(const amq_filter *f, char *out, size_t cap);

/* ---- any filter, through its variant (variant.c) ---- */

/* A membership test: false when hash was certainly never added to f. */
typedef bool (*amq_probe)(const amq_filter *f, uint64_t hash);

/* "bloom", "cuckoo". */
const char *amq_kind_name(amq_kind kind);
/* The kind whose name is name (amq_kind_name's inverse), or 0 when no
 * variant has that kind: the SQL layer names kinds, the registry numbers
 * them. */
amq_kind amq_kind_named(const char *name);
/* The SQL name of the i-th layout of kind, in the registry's order
 * ("classic", "blocked", "counting", "scalable" for bloom), or NULL past its
 * last: the layouts a caller lists (Python's amq.LAYOUTS) follow the registry. */
const char *amq_kind_layout_at(amq_kind kind, size_t i);
/* The newest format version this build reads and writes (docs/FORMAT.md):
 * AMQ_FAMILIES_FORMAT_VERSION, or a variant's first version if higher. */
unsigned amq_format_version(void);
/* The SQL name of f's layout: "classic", "blocked", "b4". */
const char *amq_filter_layout_name(const amq_filter *f);
/* The hashes and cells of a filter of this kind and layout for capacity
 * items at fpr; AMQ_TOO_LARGE past the size limit. Allocates nothing. */
amq_status amq_filter_size(amq_kind kind, amq_layout layout, uint64_t capacity, double fpr,
			   uint32_t *hashes, uint64_t *cells, amq_error *err);
/* The bytes (header and payload) of the filter amq_filter_create would make,
 * without making it: for callers that must place it in memory of their own,
 * or weigh it against a limit first. AMQ_TOO_LARGE past the size limit;
 * AMQ_INVALID_ARGUMENT for a layout that grows (scalable), whose size is
 * not fixed. Allocates nothing. */
amq_status amq_filter_bytes(amq_kind kind, amq_layout layout, uint64_t capacity, double fpr,
			    size_t *bytes, amq_error *err);
/* An empty filter of this kind and layout for capacity items at fpr. */
amq_status amq_filter_create(amq_filter *f, amq_kind kind, amq_layout layout, uint64_t capacity,
			     double fpr, uint64_t seed, const amq_allocator *a, amq_error *err);
/* The same with an expansion (0: the default), which only the scalable layout
 * takes: any other is AMQ_INVALID_ARGUMENT. */
amq_status amq_filter_create_expanding(amq_filter *f, amq_kind kind, amq_layout layout,
				       uint64_t capacity, double fpr, uint32_t expansion,
				       uint64_t seed, const amq_allocator *a, amq_error *err);
/* Adds one value; on failure (a full cuckoo filter) f is unchanged. A
 * scalable filter whose newest link is full needs amq_filter_add_to. */
amq_status amq_filter_add(amq_filter *f, uint64_t hash, amq_error *err);
/* amq_filter_add for a filter whose buffer came from a: a scalable filter
 * that must grow gets a new, larger buffer from a (the old one is freed). */
amq_status amq_filter_add_to(amq_filter *f, uint64_t hash, const amq_allocator *a, amq_error *err);
/* Adds an aggregate's distinct hashes as its builder collected them: the
 * sorted keys[0..n) (the variant's collect_key of each), in that order, the whole set or
 * consecutive pieces of it. A key is the hash itself except for a scalable
 * chain, which takes the hashes in the order of a second hash (the sorted
 * order would fill its first link from the first blocks only). Stops at the
 * first failure. */
amq_status amq_filter_add_collected(amq_filter *f, const uint64_t *keys, size_t n,
				    const amq_allocator *a, amq_error *err);
bool amq_filter_contains(const amq_filter *f, uint64_t hash);
/* Whether verifying the filter these bytes' header names decodes every cell
 * (a cuckoo filter counts its slots), so that recognising bytes verified
 * before, by comparing them with a kept copy, costs less than verifying
 * them again at any size; false for bytes that name no layout. */
bool amq_verify_reads_cells(const void *buf, size_t size);
/* The test amq_filter_contains runs for f on this CPU, for callers that probe
 * one filter many times without choosing the variant on every probe. */
amq_probe amq_filter_probe_for(const amq_filter *f);
/* out[i] = amq_filter_contains(f, hashes[i]) for i < n. For callers with
 * many probes at hand: a blocked Bloom or binary fuse filter starts loading
 * each probe's lines a few probes ahead, so a filter larger than the CPU's
 * caches costs about one memory latency per group of probes instead of one
 * per probe. */
void amq_filter_contains_many(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out);
/* Removes one copy of hash (*removed false, f unchanged, when none is
 * stored); AMQ_WRONG_KIND for a variant that cannot forget values. */
amq_status amq_filter_remove(amq_filter *f, uint64_t hash, bool *removed, amq_error *err);
/* How many times hash was added (never less than the truth); AMQ_WRONG_KIND
 * for a variant that does not count. */
amq_status amq_filter_frequency(const amq_filter *f, uint64_t hash, uint64_t *count,
				amq_error *err);
/* dst gets everything src holds; AMQ_INCOMPATIBLE unless both have the same
 * variant and parameters. dst's families become both filters' (unknown when
 * either's are); an intersection keeps those they share. */
amq_status amq_filter_union_into(amq_filter *dst, const amq_filter *src, amq_error *err);
/* dst keeps what both hold; same rule. */
amq_status amq_filter_intersect_into(amq_filter *dst, const amq_filter *src, amq_error *err);
/* The false-positive rate a random absent value sees now. */
double amq_filter_expected_fpr(const amq_filter *f);
/* Distinct values f is estimated to hold. */
double amq_filter_estimate_items(const amq_filter *f);

/* ---- Bloom filters for the join filter, which builds and probes them itself
 * (bloom.c, bloom_sizing.c; the rest of each kind's own calls are in its
 * internal header: bloom/bloom_internal.h, cuckoo/cuckoo_table.h) ---- */

/* An empty Bloom filter for capacity items at fpr. */
amq_status amq_bloom_create(amq_filter *f, uint64_t capacity, double fpr, amq_layout layout,
			    uint64_t seed, const amq_allocator *a, amq_error *err);
/* Adds hash to a Bloom filter of any layout. A scalable chain cannot grow
 * here (no allocator): a full newest link takes the value past its capacity,
 * so its rate rises above the schedule; use amq_filter_add_to to grow. */
void amq_bloom_add(amq_filter *f, uint64_t hash);
/* Adds hash to a blocked Bloom filter that other threads or processes add to
 * at the same time: each word is ORed atomically, so no bit is lost. The
 * payload ends up as amq_bloom_add's would; items and the header are left
 * alone. f->bytes must be 8-byte aligned. */
void amq_blocked_add_concurrent(amq_filter *f, uint64_t hash);

/* ---- building without knowing n (hashset.c, builder.c) ---- */

/* A bag of 64-bit hashes: a sorted, distinct prefix and the hashes added
 * since. When full it sorts only those, deduplicates them and merges them into
 * the prefix in linear time; it doubles only when the set fills more than half
 * of it. The buffer stays under 32 bytes per distinct hash (at least 8 KiB);
 * a compaction briefly adds a scratch copy of the unsorted part, and growing
 * holds the old buffer until the new one is filled: at the peak under
 * AMQ_HASHSET_PEAK_BYTES per distinct hash, and under 24 bytes per row when all
 * rows differ. */
#define AMQ_HASHSET_PEAK_BYTES 64
typedef struct amq_hashset {
	uint64_t *hashes;
	size_t count;
	size_t capacity;
	size_t sorted; /* hashes[0..sorted) is sorted and distinct */
	amq_allocator alloc;
} amq_hashset;

void amq_hashset_init(amq_hashset *s, const amq_allocator *a);
amq_status amq_hashset_add(amq_hashset *s, uint64_t hash, amq_error *err);
/* Room for `extra` more hashes at hashes[count..], for bulk appends. */
amq_status amq_hashset_reserve(amq_hashset *s, size_t extra, amq_error *err);
/* Sorts and removes duplicates; afterwards hashes[0..count) is the set, in
 * increasing order. Needs scratch memory for the unsorted part. Polls the
 * allocator's interrupt check: on AMQ_INTERRUPTED the hashes are lost, so
 * free the set. */
amq_status amq_hashset_compact(amq_hashset *s, amq_error *err);
/* Adds the sorted, distinct run[0..n) (not in s's buffer) in linear time. */
amq_status amq_hashset_union(amq_hashset *s, const uint64_t *run, size_t n, amq_error *err);
void amq_hashset_free(amq_hashset *s);

/* Every hash added, duplicates kept (hashbag.c): what a counting Bloom
 * aggregate without a capacity collects, 8 bytes per row. */
typedef struct amq_hashbag {
	uint64_t *hashes;
	size_t count;
	size_t capacity;
	amq_allocator alloc;
} amq_hashbag;

void amq_hashbag_init(amq_hashbag *b, const amq_allocator *a);
amq_status amq_hashbag_add(amq_hashbag *b, uint64_t hash, amq_error *err);
/* Room for `extra` more hashes at hashes[count..]. */
amq_status amq_hashbag_reserve(amq_hashbag *b, size_t extra, amq_error *err);
amq_status amq_hashbag_append(amq_hashbag *b, const uint64_t *hashes, size_t n, amq_error *err);
/* Sorts the bag in increasing order (with scratch memory of its size,
 * polling the allocator's interrupt check); *distinct = the number of
 * distinct hashes. On AMQ_INTERRUPTED the hashes are in no order. */
amq_status amq_hashbag_sort(amq_hashbag *b, uint64_t *distinct, amq_error *err);
/* Sorts hashes[0..n) in place with scratch[0..n) (its contents lost): the
 * radix sort of hash sets and bags. False, the hashes in no order, when a's
 * interrupt check said stop. */
bool amq_sort_hashes(uint64_t *hashes, uint64_t *scratch, size_t n, const amq_allocator *a);
void amq_hashbag_free(amq_hashbag *b);

/*
 * Builds one filter from a stream of hashes. With capacity 0 the hashes are
 * collected and the filter is sized at the end for the distinct ones; a Bloom
 * builder with a capacity streams into a fixed filter in constant memory. A
 * cuckoo builder always collects (its layout depends on insertion order, so it
 * inserts the sorted distinct hashes at the end); a capacity then fixes its size.
 * A counting Bloom builder without a capacity collects every hash, duplicates
 * included, since each row is an add. The result depends only on the multiset
 * of hashes added, never on their order or on how they were split between
 * merged builders. A collecting builder whose allocator has a spill keeps at
 * most about its memory and writes sorted runs to its files past it
 * (build/spill.c): the same bytes.
 */
#define AMQ_BUILDER_RUNS 8

/* What a long build is doing (amq_builder.progress): phase is "merging runs"
 * (past AMQ_SPILL_FAN_IN runs of a tier, during the build or before its
 * finish), then "counting" and "inserting" (the finish's two merges), done of
 * total keys read in it so far. Called as a phase starts, every
 * AMQ_INTERRUPT_EVERY keys and as it ends (done == total), from the thread
 * that runs the build. */
typedef void (*amq_progress)(void *arg, const char *phase, uint64_t done, uint64_t total);

/* A sorted run of collected keys a builder wrote to a temporary file of its
 * allocator's spill: count keys, native byte order (build/spill.c). */
typedef struct amq_spill_run {
	void *file;
	uint64_t count;
} amq_spill_run;

/* Runs merged at once (each with a read buffer): a builder merges
 * AMQ_SPILL_FAN_IN runs of about one size whenever it holds that many
 * (build/spill.c), and never holds AMQ_SPILL_RUNS: room for 7 runs in each
 * of 5 tiers of sizes, which 1 billion keys in 4 MiB take. */
#define AMQ_SPILL_FAN_IN 8
#define AMQ_SPILL_RUNS 40

typedef struct amq_builder {
	amq_kind kind;
	amq_layout layout;
	double fpr;
	uint64_t capacity; /* 0: size for the distinct hashes seen */
	uint64_t seed;
	uint64_t rows;	/* hashes added, duplicates included */
	bool streaming; /* bloom with capacity: filter is live */
	amq_filter filter;
	amq_hashset set;
	/* Sorted, distinct sets taken whole from merged builders and not joined
	 * with set: a Bloom finish counts their union and inserts each in one
	 * sequential pass, never writing the union out. */
	amq_hashset runs[AMQ_BUILDER_RUNS];
	int nruns;
	bool counts_rows; /* collecting, duplicates kept in bag instead of set */
	amq_hashbag bag;
	uint8_t families; /* of every value added (amq_builder_note_family) */
	/* Collecting without a capacity: the distinct hashes last checked
	 * against the size limit (amq_builder_add), once the set passes
	 * room_from of them (AMQ_BUILDER_ROOM_FROM unless a test lowers it). */
	uint64_t room, room_from;
	/* The spilled keys past which it next estimates its distinct ones. */
	uint64_t estimate_at;
	/* The bytes its serialized state may hold in itself
	 * (amq_builder_limit_state; 0: no limit), and whether its runs were
	 * handed over in one (it can then only be freed). */
	uint64_t state_max;
	bool handed_over;
	/* The order of collected keys (the variant's collect_key; NULL: the
	 * hash itself). */
	uint64_t (*collect_key)(uint64_t hash);
	/* Runs written to temporary files past alloc.spill's memory, and what
	 * was written in all (runs merged count again), for the adapters to
	 * report. */
	amq_spill_run spilled[AMQ_SPILL_RUNS];
	int nspilled;
	uint64_t spilled_bytes, spilled_runs;
	/* Told what a merge of spilled runs is doing (NULL: nobody). */
	amq_progress progress;
	void *progress_arg;
	amq_allocator alloc;
	/* What amq_builder_finish allocates its filter with, and
	 * amq_builder_serialize its state: alloc unless the caller wants the
	 * result elsewhere (PostgreSQL: the calling function's context, where
	 * it becomes the result in place). */
	amq_allocator result;
} amq_builder;

/* A collecting builder checks its distinct values against the size limit
 * only past this many, so that small aggregates (and many groups) never pay
 * for it; below it, a filter past the limit (an extreme fpr) fails when it is
 * made, at the end. */
#define AMQ_BUILDER_ROOM_FROM ((uint64_t)1 << 26)

amq_status amq_builder_init(amq_builder *b, amq_kind kind, amq_layout layout, double fpr,
			    uint64_t capacity, uint64_t seed, const amq_allocator *a,
			    amq_error *err);
/* Adds one value's hash. A collecting builder without a capacity fails with
 * AMQ_TOO_LARGE as soon as the distinct hashes it holds for sure pass the room
 * of a filter within the size limit: in memory the ones it has sorted (it
 * sorts as its buffer fills), spilled a lower bound estimated from its runs'
 * smallest keys (too low but once in a billion); at once, not after the last
 * row. */
amq_status amq_builder_add(amq_builder *b, uint64_t hash, amq_error *err);
/* Records the family of a value added: the filter holds every family its
 * builder saw (an aggregate over a mixed column gives a mixed filter). */
static inline void amq_builder_note_family(amq_builder *b, amq_family family)
{
	b->families |= (uint8_t)family;
}
/* For a builder whose state will be serialized (a parallel worker's): a
 * state whose hashes would take more than max_bytes in itself (about 5 bytes
 * a hash) hands them over in a file instead, as a spilled one does
 * (amq_builder_serialize). */
void amq_builder_limit_state(amq_builder *b, uint64_t max_bytes);
/* A hint that about `rows` more values are coming, for a caller that knows
 * (a Python sequence): a collecting builder makes room for them at once
 * instead of growing as they arrive. The result is the same either way. */
amq_status amq_builder_expect(amq_builder *b, uint64_t rows, amq_error *err);
/* A memory guard for a collecting builder: sets *exceeds when b holds more
 * than limit distinct hashes. It looks (sorting what was added since) only
 * once b holds more than twice limit hashes, duplicates included, so a call
 * after every add costs O(1) amortized; up to that point *exceeds stays
 * false. A streaming builder, or one that counts rows, never exceeds. */
amq_status amq_builder_exceeds(amq_builder *b, uint64_t limit, bool *exceeds, amq_error *err);
/* Adds everything other holds into b; AMQ_INCOMPATIBLE if their parameters
 * differ. b may take other's hashes, so free other afterwards and use it no
 * more. A fully sorted set (a deserialized state's) with the same allocator
 * moves into b as a run in O(1); other hashes merge in linear time. */
amq_status amq_builder_merge(amq_builder *b, amq_builder *other, amq_error *err);
/* Changes the rate that a collecting builder without a capacity sizes its
 * filter for when it finishes (the size is decided then, for the distinct
 * hashes): a caller that knows, before the finish, how many rows it added
 * may spend more bytes on fewer false positives. AMQ_INVALID_ARGUMENT for
 * any other builder, and amq_check_fpr's errors. */
amq_status amq_builder_set_fpr(amq_builder *b, double fpr, amq_error *err);
/* A sealed filter (allocated with the builder's result allocator, owned by
 * the caller). The builder stays valid and can be freed afterwards. Every builder
 * call that sorts, counts or inserts polls the allocator's interrupt check;
 * after AMQ_INTERRUPTED the builder can only be freed. */
amq_status amq_builder_finish(amq_builder *b, amq_filter *out, amq_error *err);
/* Serialized state for PostgreSQL's parallel aggregates: *out (allocated with
 * the builder's result allocator) holds *len bytes. The hashes of a builder
 * that spilled, or past its state limit, stay in files its spill hands over
 * (amq_spill.hand_over): the state names them, and b can only be freed
 * afterwards; otherwise they are in the state, Golomb-Rice coded. A spill
 * that cannot hand over fails such a state with AMQ_SPILL_FAILED. */
amq_status amq_builder_serialize(amq_builder *b, uint8_t **out, size_t *len, amq_error *err);
amq_status amq_builder_deserialize(amq_builder *b, const void *buf, size_t len,
				   const amq_allocator *a, amq_error *err);
void amq_builder_free(amq_builder *b);

/* ---- bulk maintenance of a stored filter (bulk.c) ---- */

/*
 * Adds value unless f may hold it already: when amq_filter_contains says
 * yes, *added is false and out is untouched (the caller keeps src as it is);
 * otherwise out is a sealed copy of src (from a) with the value added and its
 * family recorded (the caller checked it with amq_check_family). A false
 * positive makes it skip a value that is new, at the filter's rate: one copy
 * per value without an exact check. A full cuckoo filter is AMQ_FILTER_FULL,
 * as amq_filter_add_to.
 */
amq_status amq_filter_add_unique(const amq_filter *src, uint64_t hash, amq_family family,
				 amq_filter *out, bool *added, const amq_allocator *a,
				 amq_error *err);
/* amq_filter_add_unique in place: f unchanged, *added false, when it may
 * hold the value already; else the value added to f (whose buffer a
 * growing layout may replace with a larger one from a) and its family
 * recorded. f is left unsealed, as after amq_filter_add_to. */
amq_status amq_filter_add_absent(amq_filter *f, uint64_t hash, amq_family family, bool *added,
				 const amq_allocator *a, amq_error *err);

/* What a bulk aggregate does with each row's value. */
typedef enum amq_bulk_op { AMQ_BULK_ADD, AMQ_BULK_DELETE } amq_bulk_op;

/*
 * The state of an aggregate that starts from an existing filter
 * (bloom_add_agg, cuckoo_add_agg, bloom_delete_agg, cuckoo_delete_agg): the
 * first row's filter copied once, every row's value added or deleted in place
 * (amq_filter_add_to / amq_filter_remove, so a chain grows and a layout that
 * cannot delete says so), sealed once at the end: O(size + rows), where a
 * fold of bloom_add copies and seals the whole filter per row. Every row must
 * pass that same filter; the source's length and 64-byte header (whose
 * checksum covers every byte) identify it in O(1) per row.
 */
typedef struct amq_bulk {
	amq_bulk_op op;
	const char *function; /* the SQL name every message starts with */
	amq_filter filter;    /* the working copy, from alloc */
	uint8_t source_header[AMQ_HEADER_BYTES];
	size_t source_size;
	uint64_t values; /* values applied so far (a delete of one not stored counts too) */
	uint64_t rows;	 /* rows whose filter was checked, the first included */
	amq_allocator alloc;
} amq_bulk;

/* Starts from src, an opened and verified filter of the aggregate's kind:
 * copies it with a. function must outlive b. */
amq_status amq_bulk_start(amq_bulk *b, amq_bulk_op op, const char *function, const amq_filter *src,
			  const amq_allocator *a, amq_error *err);
/* AMQ_OK when a later row's filter is the first row's: size bytes in all,
 * of which head holds the first head_len (AMQ_HEADER_BYTES are compared).
 * AMQ_INCOMPATIBLE, naming the function and the row, otherwise. */
amq_status amq_bulk_check_same(amq_bulk *b, const void *head, size_t head_len, size_t size,
			       amq_error *err);
/* The error of a row whose filter is NULL (AMQ_INVALID_ARGUMENT). */
amq_status amq_bulk_null_filter(const char *function, amq_kind kind, amq_error *err);
/* The family check of one row's value against the working copy
 * (amq_check_family, naming b's function and "value"); an add then records
 * the family. Before amq_bulk_apply of the value's hash. */
amq_status amq_bulk_admit(amq_bulk *b, const amq_value *v, amq_dialect dialect, amq_error *err);
/* Adds or deletes one value's hash. A cuckoo filter that is full fails with
 * AMQ_FILTER_FULL and says how many values went in before; the caller's
 * statement then fails, so the stored filter keeps its bytes. */
amq_status amq_bulk_apply(amq_bulk *b, uint64_t hash, amq_error *err);
/* Seals the working copy and hands it to *out (b's allocator owns it);
 * b holds no filter afterwards. */
void amq_bulk_finish(amq_bulk *b, amq_filter *out);
/* Frees what b still holds (nothing after amq_bulk_finish). */
void amq_bulk_free(amq_bulk *b);

#endif
