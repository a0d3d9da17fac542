#include <stddef.h>

struct buf {
    char *data;
    size_t len;
};

int buf_push(struct buf *b, const char *data, size_t len);
