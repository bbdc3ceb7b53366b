-- The database the README's cache-penetration example connects to
-- (dbname=shop): amq, and users with 100,000 rows, ids 3, 6, ..., 300000.
CREATE DATABASE shop;
\connect shop
CREATE EXTENSION amq;
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
INSERT INTO users SELECT 3 * i, 'user ' || 3 * i FROM generate_series(1, 100000) i;
ANALYZE users;
