-- Deletes one live value (one that was added and not yet deleted) from a
-- stored cuckoo filter, logging it, all in one statement. A value another
-- client deleted first leaves nothing to do.
\set id random(1, 8)
WITH gone AS (
  DELETE FROM cuckoo_live WHERE ctid = (SELECT ctid FROM cuckoo_live WHERE filter_id = :id LIMIT 1)
  RETURNING filter_id, value
), logged AS (
  INSERT INTO oplog SELECT 'cuckoo', filter_id, -1, value FROM gone
)
UPDATE cfilters c SET f = cuckoo_delete(c.f, gone.value) FROM gone WHERE c.id = gone.filter_id;
