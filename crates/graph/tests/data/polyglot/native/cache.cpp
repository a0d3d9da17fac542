#include <string>
extern "C" {
#include "buf.h"
}

namespace store {

class Cache {
public:
    int put(const std::string &key, int ttl);
};

int Cache::put(const std::string &key, int ttl) {
    struct buf b = {nullptr, 0};
    return buf_push(&b, key.data(), key.size()) + ttl;
}

}
