-- A probe of one stored Bloom and one stored cuckoo filter.
\set id random(1, 8)
\set v random(1, 1000000)
SELECT bloom_contains(f, :v) FROM bfilters WHERE id = :id;
SELECT cuckoo_contains(f, :v) FROM cfilters WHERE id = :id;
