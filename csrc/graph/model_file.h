/* An .onnx file the runtime reads itself (sb_load_args.file): mapped where
 * the system allows it, so that the pages of each initializer can be handed
 * back once the loader has converted it. A model then never holds its file
 * and its converted weights in memory at once, as it must when the host
 * passes the file's bytes. */
#ifndef SB_GRAPH_MODEL_FILE_H
#define SB_GRAPH_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sb_model_file {
    const uint8_t *data;
    size_t size;
    int mapped;                  /* 1: a private read-only mapping; 0: a malloc'd copy */
} sb_model_file;

/* Opens and maps (or reads) `path`; a status and message on failure. */
int sb_model_file_open(const char *path, sb_model_file *file);
/* The loader no longer needs [p, p + n): the whole pages inside it go back
 * to the system. A later read of them reads the file again, so this is
 * safe even where something does. A copy (mapped 0) keeps everything. */
void sb_model_file_release(const sb_model_file *file, const void *p, size_t n);
void sb_model_file_close(sb_model_file *file);

#endif
