#include "text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sfc/error.hpp"

namespace sfc {
namespace {

[[noreturn]] void fail(const char* verb, const std::string& path, int error) {
  throw Error(std::string("cannot ") + verb + " " + path + ": " + std::strerror(error));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::string read_text_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) fail("read", path, errno);
  struct stat info {};
  if (fstat(fileno(file.get()), &info) == 0 && S_ISDIR(info.st_mode)) fail("read", path, EISDIR);
  std::string content;
  char buffer[1 << 16];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) content.append(buffer, got);
  if (std::ferror(file.get())) fail("read", path, errno ? errno : EIO);
  return content;
}

void write_text_file_atomically(const std::string& path, std::string_view content) {
  std::string temp = path + ".tmp-XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) fail("write", path, errno);
  auto abandon = [&](int error) {
    close(fd);
    unlink(temp.c_str());
    fail("write", path, error);
  };
  // mkstemp creates 0600; a result file is as readable as any other output.
  if (fchmod(fd, 0644) != 0) abandon(errno);
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t wrote = write(fd, content.data() + done, content.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) abandon(errno);
    done += static_cast<std::size_t>(wrote);
  }
  if (fsync(fd) != 0) abandon(errno);
  if (close(fd) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    fail("write", path, error);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    fail("write", path, error);
  }
}

}  // namespace sfc
