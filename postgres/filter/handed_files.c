/*
 * filter/handed_files.c - where a parallel worker's spilled runs go so that
 * its leader can read them (filter/temp_files.c hands them over): a
 * PostgreSQL FileSet named by the leader, one directory per temporary
 * tablespace, pgsql_tmp<leader pid>.<HANDED_FILES_NUMBER>.fileset.
 *
 * A worker's temporary files go when it exits; these stay, so that the
 * leader opens them by name from the worker's state. The leader removes each
 * when it has merged it, and at the end of each of its transactions (and of
 * each subtransaction that aborts outside a parallel operation) the whole
 * directory: its workers are gone by then, so whatever is left (a state it
 * never read, after an error, a cancel or a LIMIT) is garbage. A leader that
 * crashes leaves them to the server's restart, which clears pgsql_tmp.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_tablespace_d.h"
#include "common/file_utils.h" /* PG_TEMP_FILE_PREFIX from 17 on */
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/proc.h"

#include <stdlib.h>

#include "filter/filter.h"

/* The FileSet number of the leader's directory: above FileSetInit's
 * counter (which stays below INT_MAX), so it is never one of PostgreSQL's
 * own sets of the same process; "amq" in its low bytes. */
#define HANDED_FILES_NUMBER ((uint32)0x80616d71)

/* This process made files in its own directory in this transaction (a
 * leader's own partial aggregate, or one with no workers). */
static bool made_files;

/* The process whose directory this process's handed files go to: the
 * leader of its parallel group, else itself. */
static pid_t directory_owner(void)
{
	PGPROC *leader = MyProc->lockGroupLeader;

	return IsParallelWorker() && leader != NULL ? leader->pid : MyProcPid;
}

void amq_pg_handed_files_init(FileSet *set)
{
	FileSetInit(set);
	set->creator_pid = directory_owner();
	set->number = HANDED_FILES_NUMBER;
	if (!IsParallelWorker())
		made_files = true;
}

void amq_pg_handed_file_name(char *name, size_t size, pid_t maker, uint32 number)
{
	snprintf(name, size, "amq.%d.%u", (int)maker, number);
}

void amq_pg_handed_token(const FileSet *set, pid_t maker, uint32 number, uint8_t *token)
{
	memset(token, 0, AMQ_SPILL_TOKEN);
	memcpy(token, &set->creator_pid, sizeof(pid_t));
	memcpy(token + 4, &maker, sizeof(pid_t));
	memcpy(token + 8, &number, sizeof(uint32));
	memcpy(token + 12, &set->ntablespaces, sizeof(int));
	memcpy(token + 16, set->tablespaces, sizeof(set->tablespaces));
}

bool amq_pg_handed_token_read(const uint8_t *token, FileSet *set, pid_t *maker, uint32 *number)
{
	memcpy(&set->creator_pid, token, sizeof(pid_t));
	memcpy(maker, token + 4, sizeof(pid_t));
	memcpy(number, token + 8, sizeof(uint32));
	memcpy(&set->ntablespaces, token + 12, sizeof(int));
	memcpy(set->tablespaces, token + 16, sizeof(set->tablespaces));
	set->number = HANDED_FILES_NUMBER;
	/* Only this process's own directory, whatever the bytes say. */
	return set->creator_pid == MyProcPid && set->ntablespaces >= 1 &&
	       set->ntablespaces <= (int)lengthof(set->tablespaces);
}

/* Removes this process's directory in tablespace ts, if there is one. */
static void remove_directory(Oid ts)
{
	char temp[MAXPGPATH], path[MAXPGPATH];

	TempTablespacePath(temp, ts);
	snprintf(path, sizeof(path), "%s/%s%lu.%u.fileset", temp, PG_TEMP_FILE_PREFIX,
		 (unsigned long)MyProcPid, HANDED_FILES_NUMBER);
	PathNameDeleteTemporaryDir(path);
}

/* Removes this process's directories in every tablespace: the default one
 * and each under pg_tblspc (read from the disk, since a transaction that
 * ends cannot read the catalog). */
static void remove_directories(void)
{
	DIR *dir;
	struct dirent *de;

	remove_directory(DEFAULTTABLESPACE_OID);
	dir = AllocateDir("pg_tblspc");
	while ((de = ReadDirExtended(dir, "pg_tblspc", LOG)) != NULL) {
		char *end;
		unsigned long ts = strtoul(de->d_name, &end, 10);

		if (*end == '\0' && end != de->d_name && ts <= PG_UINT32_MAX)
			remove_directory((Oid)ts);
	}
	FreeDir(dir);
}

/* Whether this process may have a directory: it made files itself, or it
 * has led workers (a lock group leader stays one for its session). */
static bool may_have_files(void)
{
	return made_files || (MyProc != NULL && MyProc->lockGroupLeader == MyProc);
}

/* At the end of a leader's transaction, its directories go. */
static void at_transaction_end(XactEvent event, void *arg)
{
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
	     event == XACT_EVENT_PREPARE) &&
	    may_have_files()) {
		remove_directories();
		made_files = false;
	}
}

/* A subtransaction that aborts outside a parallel operation: its workers
 * are gone. A query of an outer level still running has none either, and
 * it hands a state over only from one of its nodes straight to the next,
 * never across this; the files it still writes are open, and stay readable
 * and writable unlinked. */
static void at_subtransaction_abort(SubXactEvent event, SubTransactionId sub,
				    SubTransactionId parent, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && !IsInParallelMode() && !IsParallelWorker() &&
	    may_have_files())
		remove_directories();
}

void amq_pg_handed_files_register(void)
{
	RegisterXactCallback(at_transaction_end, NULL);
	RegisterSubXactCallback(at_subtransaction_abort, NULL);
}
