#include "sqlite.hpp"

#include <cstdio>
#include <utility>

#include "fault_injection.hpp"

namespace sfc::sqlite {

Database::Database(const std::string& path, int flags, bool immutable) : path_(path) {
  fault::install();  // SFC_FAULT, for tests: see fault_injection.hpp
  std::string name = path;
  if (immutable) {  // only a URI can say so; %, ? and # would end its path part
    name = "file:";
    for (const char c : path) {
      if (c == '%' || c == '?' || c == '#') {
        char escaped[4];
        std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
        name += escaped;
      } else {
        name += c;
      }
    }
    name += "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  const int code = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (code != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("cannot open database " + path + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  // Another process may hold the write lock for one shape's commit; wait for it.
  sqlite3_busy_timeout(db_, 30000);
}

Database::~Database() { sqlite3_close(db_); }

Database::Database(Database&& other) noexcept
    : path_(std::move(other.path_)), db_(std::exchange(other.db_, nullptr)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    path_ = std::move(other.path_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

namespace {

// `text` on one line: every run of whitespace (the line breaks of a statement
// quoted as context, of a schema's SQL in SQLite's message) becomes one space.
std::string one_line(std::string_view text) {
  std::string line;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  return line;
}

}  // namespace

void Database::fail(int code, std::string_view context) const {
  std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  if ((code & 0xff) == SQLITE_NOTADB) message = "not an SQLite database";
  if ((code & 0xff) == SQLITE_CORRUPT) message = "the database file is corrupt (" + message + ")";
  throw Failure("database " + path_ + ": " + one_line(context) + ": " + one_line(message), code);
}

void Database::exec(const char* sql) {
  char* error = nullptr;
  const int code = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (code != SQLITE_OK) {
    sqlite3_free(error);  // the same text as sqlite3_errmsg, which fail() reports
    fail(code, std::string_view(sql).substr(0, 40));
  }
}

void Database::rollback() noexcept {
  // SQLite may already have rolled back (e.g. after SQLITE_FULL); then there is nothing to undo.
  if (in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int code = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (code != SQLITE_OK) fail(code, "preparing '" + std::string(sql.substr(0, 40)) + "'");
  return Statement(*this, stmt);
}

void Statement::check_bind(int code) {
  if (code != SQLITE_OK) db_->fail(code, "binding a value");
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check_bind(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT));
  return *this;
}

bool Statement::step() {
  const int code = sqlite3_step(stmt_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  sqlite3_reset(stmt_);
  db_->fail(code, "running '" + sql.substr(0, 40) + "'");
}

void Statement::run() {
  while (step()) {}
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const auto* chars = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return chars ? std::string(chars, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
               : std::string();
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (open_) db_.rollback();
}

void Transaction::commit() {
  fault::before_commit();
  db_.exec("COMMIT");
  open_ = false;
  fault::after_commit();
}

ReadTransaction::ReadTransaction(Database& db) : db_(db), own_(!db.in_transaction()) {
  if (own_) db_.exec("BEGIN");
}

// Nothing was written, so ending by rollback loses nothing and cannot fail.
ReadTransaction::~ReadTransaction() {
  if (own_) db_.rollback();
}

}  // namespace sfc::sqlite
