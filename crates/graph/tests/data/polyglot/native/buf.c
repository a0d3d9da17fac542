#include <string.h>
#include "buf.h"

int buf_push(struct buf *b, const char *data, size_t len)
{
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}
