-- pg_temp.try(query [, mask_numbers]): runs query and returns 'ok', or the
-- SQLSTATE, message and hint of its error, so a test can assert all three on
-- one line. With mask_numbers every number in the message reads N, for
-- messages that quote sizes the test should not depend on.
CREATE FUNCTION pg_temp.try(query text, mask_numbers boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
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
	IF mask_numbers THEN
		msg = regexp_replace(msg, '[0-9][0-9.]*', 'N', 'g');
	END IF;
	RETURN state || ': ' || msg || CASE WHEN hint <> '' THEN ' | ' || hint ELSE '' END;
END $$;
