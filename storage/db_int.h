/*
** db_int.h — storage internals shared by db.c and the storage tests:
** opening a store over a given env (the fault and memory envs), and the
** simulated power cut of the fault env. Nothing here is public API.
*/
#ifndef WCS_DB_INT_H
#define WCS_DB_INT_H

#include "wcs.h"
#include "storage/env.h"

/*
** Like wcs_db_open(), but every file goes through pEnv (not owned; it must
** outlive the handle). With bInMemory set in pOpt, pEnv is ignored and a
** private memory env is used.
*/
int wcs_db_open_env(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                    wcs_env *pEnv, char **pzErr);

/*
** Fault env only: simulate a machine crash. Every file written through the
** fault env is cut back to the bytes it had when last synced (files never
** synced become empty). Returns WCS_OK or WCS_IOERR. Call it only while no
** store is open on the env.
*/
int wcs_env_fault_crash(wcs_env *pEnv);

#endif /* WCS_DB_INT_H */
