-- The join filter's settings are checked. PostgreSQL 16 and later name the
-- unit in the valid range of a memory setting (join_filter_settings_1.out).
-- The settings exist once the module is loaded.
LOAD 'amq';
SET amq.join_filter_max_pass_rate = 2;
SET amq.join_filter_max_memory = '1kB';
-- A remote filter crosses as hex text, which must stay under 1GB: at most
-- 512MB less 1kB.
SET amq.join_filter_remote_max_memory = '512MB';
SET amq.join_filter_remote_max_memory = '524287kB';
SHOW amq.join_filter_remote_max_memory;
-- The filter shipped to postgres_fdw scans: bloom (the default) or fuse.
SHOW amq.join_filter_remote_filter;
SET amq.join_filter_remote_filter = 'cuckoo';
SET amq.join_filter_remote_filter = 'fuse';
SHOW amq.join_filter_remote_filter;
