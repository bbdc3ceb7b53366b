-- pg_temp.try(query): runs query and returns 'ok', or the SQLSTATE, message
-- and hint of its error, so a test can assert all three on one line.
CREATE FUNCTION pg_temp.try(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
	hint text;
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		hint = PG_EXCEPTION_HINT;
	RETURN state || ': ' || msg || CASE WHEN hint <> '' THEN ' | ' || hint ELSE '' END;
END $$;
