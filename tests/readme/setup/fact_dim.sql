-- The star join of the README's automatic join filter example: fact rows
-- over 1,000 dimension rows in 10 regions, one of them 'ASIA'.
CREATE TABLE dim (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO dim
  SELECT i, (ARRAY['ASIA', 'EUROPE', 'AFRICA', 'AMERICA', 'OCEANIA', 'ARCTIC', 'ANTARCTICA',
                   'ATLANTIC', 'PACIFIC', 'INDIAN'])[1 + i % 10]
  FROM generate_series(1, 1000) i;
CREATE TABLE fact (id bigint, dim_id int);
INSERT INTO fact SELECT i, 1 + i % 1000 FROM generate_series(1, 20000) i;
ANALYZE dim, fact;
