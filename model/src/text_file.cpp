#include "sfc/text_file.hpp"

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
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of
  // hanging; it is refused below like every other file that is not regular.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("read", path, errno);
  std::unique_ptr<std::FILE, FileCloser> file(fdopen(fd, "rb"));
  if (!file) {
    const int error = errno;
    close(fd);
    fail("read", path, error);
  }
  struct stat info {};
  if (fstat(fd, &info) != 0) fail("read", path, errno);
  if (S_ISDIR(info.st_mode)) fail("read", path, EISDIR);
  // A device (/dev/zero) or a pipe could be read forever or block: only regular files are ours.
  if (!S_ISREG(info.st_mode)) throw Error("cannot read " + path + ": not a regular file");
  if (info.st_size > kMaxTextFileBytes)
    throw Error("cannot read " + path + ": " + std::to_string(info.st_size >> 20) + " MiB, more than the " +
                std::to_string(kMaxTextFileBytes >> 20) + " MiB a tuning table or export may have");
  std::string content;
  content.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) content.append(buffer, got);
  if (std::ferror(file.get())) fail("read", path, errno ? errno : EIO);
  return content;
}

namespace {

// Writes `content` straight into an existing device or pipe (/dev/null, /dev/stdout):
// renaming a temporary file over it would replace the device node itself.
void write_through(const std::string& path, std::string_view content) {
  // O_NONBLOCK: a pipe nobody reads is refused (ENXIO) instead of blocking the
  // open for ever; the writes themselves block as usual.
  const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) throw Error("cannot write " + path + ": a pipe that no process reads");
  if (fd < 0) fail("write", path, errno);
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int error = errno;
    close(fd);
    fail("write", path, error);
  }
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t wrote = write(fd, content.data() + done, content.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      const int error = errno;
      close(fd);
      fail("write", path, error);
    }
    done += static_cast<std::size_t>(wrote);
  }
  if (close(fd) != 0) fail("write", path, errno);
}

}  // namespace

void check_output_file(const std::string& path) {
  struct stat existing {};
  if (path == "-" || stat(path.c_str(), &existing) != 0) return;
  if (S_ISDIR(existing.st_mode)) fail("write", path, EISDIR);
  if (!S_ISFIFO(existing.st_mode)) return;
  const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) throw Error("cannot write " + path + ": a pipe that no process reads");
  if (fd < 0) fail("write", path, errno);
  close(fd);
}

void write_text_file_atomically(const std::string& path, std::string_view content) {
  if (path == "-") {  // standard output, as the usual command-line convention has it
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
      fail("write", "standard output", errno ? errno : EIO);
    return;
  }
  struct stat existing {};
  if (stat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) fail("write", path, EISDIR);
    if (!S_ISREG(existing.st_mode)) return write_through(path, content);
  }
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
