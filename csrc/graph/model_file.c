/* Reading an .onnx file (model_file.h): mmap on POSIX systems, fread
 * elsewhere (WebAssembly's in-memory file systems, Windows). */
#define _DEFAULT_SOURCE     /* mmap, madvise, sysconf where the build is strict C */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "graph/error.h"
#include "graph/model_file.h"

#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#define SB_MAP_FILES 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

static int read_copy(const char *path, sb_model_file *file)
{
    FILE *f = fopen(path, "rb");
    if (!f) return sb_fail(SB_ERR_VALUE, "cannot open the model file '%s'", path);
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return sb_fail(SB_ERR_VALUE, "cannot read the model file '%s'", path);
    }
    uint8_t *data = malloc(size ? (size_t)size : 1);
    if (!data) {
        fclose(f);
        return sb_fail(SB_ERR_NO_MEMORY, "out of memory for the model file '%s' (%ld bytes)", path, size);
    }
    if (fread(data, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(data);
        return sb_fail(SB_ERR_VALUE, "cannot read the model file '%s'", path);
    }
    fclose(f);
    file->data = data, file->size = (size_t)size, file->mapped = 0;
    return SB_OK;
}

int sb_model_file_open(const char *path, sb_model_file *file)
{
    memset(file, 0, sizeof *file);
#ifdef SB_MAP_FILES
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sb_fail(SB_ERR_VALUE, "cannot open the model file '%s'", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sb_fail(SB_ERR_VALUE, "the model file '%s' is not a regular file", path);
    }
    if (st.st_size == 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
        /* nothing to map (an empty file is then refused by the reader) */
        close(fd);
        return read_copy(path, file);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);    /* the mapping keeps the file */
    if (map == MAP_FAILED) return read_copy(path, file);
    file->data = map, file->size = (size_t)st.st_size, file->mapped = 1;
    return SB_OK;
#else
    return read_copy(path, file);
#endif
}

void sb_model_file_release(const sb_model_file *file, const void *p, size_t n)
{
#ifdef SB_MAP_FILES
    if (!file->mapped || !p || !n) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (page == 0 || (page & (page - 1))) return;
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(page - 1);
    /* a private mapping nothing wrote to: its dropped pages are read from
     * the file again if touched */
    if (end > start) (void)madvise((void *)start, (size_t)(end - start), MADV_DONTNEED);
#else
    (void)file, (void)p, (void)n;
#endif
}

void sb_model_file_close(sb_model_file *file)
{
    if (!file->data) return;
#ifdef SB_MAP_FILES
    if (file->mapped) munmap((void *)file->data, file->size);
    else free((void *)file->data);
#else
    free((void *)file->data);
#endif
    memset(file, 0, sizeof *file);
}
