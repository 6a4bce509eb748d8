/*
** db_int.h — storage internals shared by db.c and the storage tests:
** opening a store over a given env (the fault and memory envs). The fault
** env itself, with its simulated power cut, is in env.h. Nothing here is
** public API.
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

#endif /* WCS_DB_INT_H */
