-- amq 0.2.0 -> 0.3.0: cuckoo filters with buckets of 2, 4 or 8 fingerprints
-- and semi-sorted buckets, add-if-absent, and aggregates that add rows to (or
-- delete them from) an existing filter in one pass. Stored filters of every
-- 0.2.0 kind and layout read unchanged and are written unchanged; only the
-- new cuckoo layouts are written as format version 3.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.3.0'" to load this file. \quit
