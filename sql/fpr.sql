-- Measured false-positive rates over 1M members and 1M absent probes stay
-- within 1.15x of the requested rate, with no false negatives. Computed in
-- SQL so that only booleans are printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TEMP TABLE fpr_filters AS
SELECT (SELECT bloom_agg(i) FROM generate_series(1, 1000000) i) AS b_int,
       (SELECT bloom_agg('k' || i, 0.001, 1000000) FROM generate_series(1, 1000000) i) AS b_text,
       (SELECT cuckoo_agg(i) FROM generate_series(1, 1000000) i) AS c_int;

SELECT bloom_info(b_int)->'items' AS bloom_items, bloom_info(b_text)->'items' AS text_items,
       cuckoo_info(c_int)->'items' AS cuckoo_items,
       (cuckoo_info(c_int)->>'load_factor')::float8 >= 0.9 AS cuckoo_well_filled
FROM fpr_filters;

SELECT count(*) FILTER (WHERE NOT bloom_contains(b_int, i)) AS bloom_false_negatives,
       count(*) FILTER (WHERE NOT bloom_contains(b_text, 'k' || i)) AS text_false_negatives,
       count(*) FILTER (WHERE NOT cuckoo_contains(c_int, i)) AS cuckoo_false_negatives
FROM fpr_filters, generate_series(1, 1000000) i;

SELECT count(*) FILTER (WHERE bloom_contains(b_int, i)) / 1e6 <= 1.15 * 0.01 AS bloom_fpr_ok,
       count(*) FILTER (WHERE bloom_contains(b_text, 'k' || i)) / 1e6 <= 1.15 * 0.001
         AS text_fpr_ok,
       count(*) FILTER (WHERE cuckoo_contains(c_int, i)) / 1e6 <= 1.15 * 0.01 AS cuckoo_fpr_ok,
       count(*) FILTER (WHERE bloom_contains(b_int, i)) > 0 AS bloom_has_false_positives
FROM fpr_filters, generate_series(1000001, 2000000) i;

-- The filter's own estimate agrees with the measurement.
SELECT abs(bloom_fpr(b_int) - 0.01) < 0.002 AS bloom_fpr_estimate_ok,
       bloom_count(b_int) BETWEEN 980000 AND 1020000 AS bloom_count_ok
FROM fpr_filters;
