/*
** iter.h — the internal iterator interface every layer of the LSM speaks:
** memtable, sorted file (sst), level (a run of files), merging iterator.
**
** Keys are internal keys (ikey.h) in internal-key order. An iterator starts
** unpositioned. xSeek positions at the first entry >= the given internal
** key; xSeekForPrev at the last entry <= it. After any call, xValid tells
** whether it is positioned; when a call fails, xValid is 0 and xStatus
** returns the code (and sets *pzErr once, naming file and offset for
** corruption). Key/value pointers are borrowed until the next move.
**
** xRun is optional too (NULL: none): the block cursor the iterator is
** positioned in, when stepping that cursor (block_iter_step) is a step of
** this iterator as well, or NULL. The cursor belongs to the iterator: it
** stays valid until the iterator's next move by any other means, and
** steps of it within its block need no call to the iterator.
*/
#ifndef WCS_ITER_H
#define WCS_ITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct wcs_iiter wcs_iiter;
typedef struct wcs_iiter_methods wcs_iiter_methods;

struct wcs_iiter_methods {
  int (*xFirst)(wcs_iiter *);
  int (*xLast)(wcs_iiter *);
  int (*xSeek)(wcs_iiter *, const uint8_t *pIKey, size_t nIKey);
  int (*xSeekForPrev)(wcs_iiter *, const uint8_t *pIKey, size_t nIKey);
  int (*xNext)(wcs_iiter *);
  int (*xPrev)(wcs_iiter *);
  int (*xValid)(const wcs_iiter *);
  const uint8_t *(*xKey)(const wcs_iiter *, size_t *pnKey);
  const uint8_t *(*xValue)(const wcs_iiter *, size_t *pnVal);
  int (*xStatus)(const wcs_iiter *, char **pzErr);
  void (*xClose)(wcs_iiter *);
  struct block_iter *(*xRun)(wcs_iiter *);
};

/* Every iterator struct begins with this base. */
struct wcs_iiter {
  const wcs_iiter_methods *pMethods;
};

#endif /* WCS_ITER_H */
