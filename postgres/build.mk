# PostgreSQL extension (PGXS, in postgres/): `make pg` builds postgres/amq.so,
# `make install` installs it into the server PG_CONFIG names (amq.control,
# amq--0.1.0.sql and the update scripts, the current version's install script
# built from them, $libdir/amq.so and its JIT bitcode), `make bench-pg` runs
# the PostgreSQL benchmark on a temporary cluster, `make bench-multi` the
# join prefilter benchmark across a coordinator and two shards, `make demo-pg`
# the demonstration on such servers (postgres/demo.sh), `make bench-join` the
# join filter benchmark (bench/join/). Included by the top Makefile, whose
# variables (PG_CONFIG, BUILD, PYTHON) it uses.

.PHONY: pg install bench-pg bench-multi demo-pg bench-join bench-join-versions

pg: | check-pg
	$(MAKE) -C postgres PG_CONFIG=$(PG_CONFIG)

install: pg
	$(MAKE) -C postgres install PG_CONFIG=$(PG_CONFIG)

bench-pg: install
	@PG_CONFIG=$(PG_CONFIG) bash bench/pg/run.sh

bench-multi: install
	@PG_CONFIG=$(PG_CONFIG) bash bench/multi/run.sh

demo-pg: install
	@PG_CONFIG=$(PG_CONFIG) bash postgres/demo.sh

# The automatic join filter on a 10M-row star schema, generated once into a
# kept cluster (AMQ_JOIN_BENCH_DIR, default /tmp/amq-join-bench).
bench-join: install
	@PG_CONFIG=$(PG_CONFIG) bash bench/join/run.sh

# The same on the host's PostgreSQL and in the Debian root of 18 (sid), side
# by side (bench/join/versions.sh; AMQ_BENCH_ROOTS names other roots).
bench-join-versions: install
	@PG_CONFIG=$(PG_CONFIG) bash bench/join/versions.sh
