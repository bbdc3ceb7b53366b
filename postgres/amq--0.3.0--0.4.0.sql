-- amq 0.3.0 -> 0.4.0: filters that know what they hold. Every filter amq
-- writes now records the families of the values added (numbers, text,
-- blobs) in format version 4, and a probe, add, delete or count of a value
-- of another family is an error with a hint that shows the cast, where 0.3.0
-- answered false. Filters stored by 0.3.0 and before read unchanged, with
-- unknown families (no check), and combine with new ones. No SQL object
-- changes: the library does it all.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.4.0'" to load this file. \quit
