#include "sfc/shape_claims.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sfc/error.hpp"

namespace sfc {
namespace {

// FNV-1a: stable across builds and machines, so every tuner maps a key to
// the same byte. Two keys sharing a byte only take turns; nothing is lost.
std::int64_t offset_of(std::string_view key) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : key) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<std::int64_t>(hash >> 2);  // a non-negative off_t; locks beyond the end are fine
}

// The byte every open ShapeClaims holds a shared lock on, beyond every
// shape's (offset_of() < 2^62): the last one to close finds it alone and
// removes the file.
constexpr std::int64_t kPresenceOffset = std::int64_t{1} << 62;

bool lock(int fd, short type, std::int64_t offset, bool wait = false) {
  struct flock region {};
  region.l_type = type;
  region.l_whence = SEEK_SET;
  region.l_start = static_cast<off_t>(offset);
  region.l_len = 1;
  // OFD locks: owned by this open file, not by the process, so they behave
  // the same whichever thread takes them, and end with the file's last close.
  while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &region) != 0) {
    if (errno == EINTR) continue;
    return false;
  }
  return true;
}

}  // namespace

ShapeClaims::ShapeClaims(const std::string& database_path)
    : path_(database_path + "-claims"), owner_(::getpid()) {
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error("cannot open " + path_ +
                  " (where tuners sharing a database claim shapes): " + std::strerror(errno));
    if (!lock(fd_, F_RDLCK, kPresenceOffset, /*wait=*/true)) {
      const int error = errno;
      ::close(fd_);
      throw Error("cannot lock " + path_ + ": " + std::strerror(error));
    }
    // The last user may have removed the file between the open and the
    // lock: then every later tuner opens a new one, which this one must share.
    struct stat opened {};
    struct stat named {};
    if (::fstat(fd_, &opened) == 0 && ::stat(path_.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
        opened.st_ino == named.st_ino)
      return;
    ::close(fd_);
  }
}

ShapeClaims::~ShapeClaims() {
  if (fd_ < 0) return;
  // Alone on the file (no other process or ShapeClaims has it open): remove
  // it, so that a finished tuner leaves only the database behind.
  // A forked child shares its parent's open file (and its locks): only the opener removes it.
  if (::getpid() == owner_ && lock(fd_, F_WRLCK, kPresenceOffset)) ::unlink(path_.c_str());
  ::close(fd_);  // drops every claim still held
}

ShapeClaims::Claim::~Claim() {
  if (fd_ >= 0) lock(fd_, F_UNLCK, offset_);
}

std::optional<ShapeClaims::Claim> ShapeClaims::try_claim(std::string_view key) {
  const std::int64_t offset = offset_of(key);
  if (!lock(fd_, F_WRLCK, offset)) {
    if (errno == EAGAIN || errno == EACCES) return std::nullopt;  // another tuner holds it
    throw Error("cannot claim a shape in " + path_ + ": " + std::strerror(errno));
  }
  return Claim(fd_, offset);
}

}  // namespace sfc
