#include "ipc/curve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/base/log.h"
#include "ipc/file_util.h"
#include "ipc/zmq_context.h"

namespace az::ipc {
namespace {

constexpr size_t kZ85KeyChars = 40;
constexpr char kServerPublic[] = "server.public";
constexpr char kServerSecret[] = "server.secret";
constexpr char kClientPublic[] = "client.public";
constexpr char kClientSecret[] = "client.secret";
constexpr char kAuthorizedClients[] = "authorized_clients";

Status WriteNewFile(const std::string& path, const std::string& contents, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return FailedPrecondition("creating " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, contents.data(), contents.size()) ==
                      static_cast<ssize_t>(contents.size()) &&
                  ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) return FailedPrecondition("writing " + path + ": " + std::strerror(error));
  return Status::Ok();
}

// The first non-empty, non-comment line of a key file, checked to be a Z85 key.
Result<std::string> ReadKeyFile(const std::string& path, bool secret) {
  if (secret) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      return FailedPrecondition("the secret key " + path +
                                " may be read by group or others; chmod 600 it");
    }
  }
  AZ_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (!IsZ85Key(line)) return DataLoss(path + " does not hold a 40-character Z85 CURVE key");
    return line;
  }
  return DataLoss(path + " holds no key");
}

Result<std::vector<std::string>> ReadAuthorizedClients(const std::string& path) {
  AZ_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  std::vector<std::string> keys;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (!IsZ85Key(line)) {
      return DataLoss(path + " line " + std::to_string(number) +
                      " is not a 40-character Z85 CURVE key");
    }
    keys.push_back(line);
  }
  return keys;
}

std::string Z85(const unsigned char* data, size_t size) {
  std::string out(size * 5 / 4 + 1, '\0');
  if (zmq_z85_encode(out.data(), data, size) == nullptr) return {};
  out.resize(size * 5 / 4);
  return out;
}

// --- The process's ZAP handler ----------------------------------------------------------------

struct Domain {
  std::set<std::string> keys;
  std::string owner;
  std::uint64_t refused = 0;
  std::uint64_t unlogged = 0;
  std::chrono::steady_clock::time_point last_log{};
};

class ZapHandler {
 public:
  static ZapHandler& Get() {
    static ZapHandler* handler = new ZapHandler();  // never destroyed: outlives every socket
    return *handler;
  }

  Result<std::string> Add(std::vector<std::string> keys, std::string owner) {
    std::lock_guard lifecycle(lifecycle_);
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) AZ_RETURN_IF_ERROR(StartLocked());
    std::string domain = "az-" + std::to_string(++next_id_);
    Domain& d = domains_[domain];
    d.keys.insert(keys.begin(), keys.end());
    d.owner = std::move(owner);
    return domain;
  }

  void Remove(const std::string& domain) {
    std::lock_guard lifecycle(lifecycle_);
    std::thread stopping;
    {
      std::lock_guard lock(mutex_);
      if (domains_.erase(domain) == 0 || !domains_.empty()) return;
      stop_.store(true);
      stopping = std::move(thread_);
    }
    // Joined outside mutex_ (the thread takes it for every request it answers) but inside
    // lifecycle_, so that no new handler binds the ZAP endpoint before this one has let it go.
    if (stopping.joinable()) stopping.join();
  }

  std::uint64_t Refused(const std::string& domain) {
    std::lock_guard lock(mutex_);
    auto it = domains_.find(domain);
    return it == domains_.end() ? 0 : it->second.refused;
  }

 private:
  Status StartLocked() {
    std::shared_ptr<zmq::context_t> context = SharedContext();
    zmq::socket_t socket;
    try {
      socket = zmq::socket_t(*context, zmq::socket_type::rep);
      socket.set(zmq::sockopt::linger, 0);
      // Bound here, before any CURVE socket of this registration binds, so that no handshake
      // finds the handler missing (libzmq then lets every client in).
      socket.bind("inproc://zeromq.zap.01");
    } catch (const zmq::error_t& e) {
      return Internal(std::string("starting the ZAP handler: ") + e.what());
    }
    stop_.store(false);
    thread_ = std::thread([this, context, s = std::move(socket)]() mutable {
      Loop(s);
      s.close();
    });
    return Status::Ok();
  }

  void Loop(zmq::socket_t& socket) {
    while (!stop_.load()) {
      zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
      try {
        if (zmq::poll(items, 1, std::chrono::milliseconds(100)) == 0) continue;
        std::vector<zmq::message_t> parts;
        while (true) {
          zmq::message_t part;
          if (!socket.recv(part, zmq::recv_flags::none)) break;
          const bool more = part.more();
          parts.push_back(std::move(part));
          if (!more) break;
        }
        Answer(socket, parts);
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        AZ_LOG(kError) << "ZAP handler: " << e.what() << "; CURVE clients are refused from now on";
        return;
      }
    }
  }

  // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
  void Answer(zmq::socket_t& socket, std::vector<zmq::message_t>& parts) {
    std::string status = "400";
    std::string text = "malformed ZAP request";
    std::string request_id;
    if (parts.size() >= 6) {
      request_id = parts[1].to_string();
      const std::string domain = parts[2].to_string();
      const std::string address = parts[3].to_string();
      const std::string mechanism = parts[5].to_string();
      std::string key;
      if (mechanism == "CURVE" && parts.size() >= 7 && parts[6].size() == 32) {
        key = Z85(static_cast<const unsigned char*>(parts[6].data()), 32);
      }
      std::lock_guard lock(mutex_);
      auto it = domains_.find(domain);
      if (it != domains_.end() && !key.empty() && it->second.keys.contains(key)) {
        status = "200";
        text = "OK";
      } else {
        text = "client key not authorized";
        if (it != domains_.end()) {
          Domain& d = it->second;
          ++d.refused;
          ++d.unlogged;
          // At most one line a second per socket, so that a scanner cannot flood the log.
          const auto now = std::chrono::steady_clock::now();
          if (now - d.last_log >= std::chrono::seconds(1)) {
            AZ_LOG(kWarning) << d.owner << " refused a " << mechanism << " client from " << address
                             << (key.empty() ? std::string(" without a CURVE key")
                                             : " with the key " + key)
                             << ": not in the run's keys/authorized_clients (" << d.unlogged
                             << " refused since the last such line, " << d.refused
                             << " in all)";
            d.unlogged = 0;
            d.last_log = now;
          }
        }
      }
    }
    socket.send(zmq::buffer(std::string_view("1.0")), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(status), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(text), zmq::send_flags::sndmore);
    socket.send(zmq::message_t(), zmq::send_flags::sndmore);  // user id
    socket.send(zmq::message_t(), zmq::send_flags::none);     // metadata
  }

  std::mutex lifecycle_;  // starting and stopping the thread; taken before mutex_
  std::mutex mutex_;      // domains_, thread_
  std::map<std::string, Domain> domains_;
  std::uint64_t next_id_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

std::atomic<std::uint64_t> next_tmp_id{0};

}  // namespace

bool IsTcpEndpoint(std::string_view endpoint) { return endpoint.starts_with("tcp://"); }

bool IsZ85Key(std::string_view key) {
  if (key.size() != kZ85KeyChars) return false;
  std::string text(key);
  unsigned char bytes[32];
  return zmq_z85_decode(bytes, text.c_str()) != nullptr;
}

Result<CurveKeyPair> GenerateCurveKeyPair() {
  char public_key[kZ85KeyChars + 1];
  char secret_key[kZ85KeyChars + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return Internal(std::string("generating a CURVE key pair (is libzmq built with CURVE?): ") +
                    zmq_strerror(zmq_errno()));
  }
  return CurveKeyPair{public_key, secret_key};
}

std::string RunKeysDir(std::string_view run_dir) { return std::string(run_dir) + "/keys"; }

Status EnsureRunKeys(const std::string& run_dir) {
  const std::string dir = RunKeysDir(run_dir);
  if (std::filesystem::exists(dir)) return Status::Ok();
  AZ_ASSIGN_OR_RETURN(CurveKeyPair server, GenerateCurveKeyPair());
  AZ_ASSIGN_OR_RETURN(CurveKeyPair client, GenerateCurveKeyPair());
  // Built aside and renamed into place: a process that finds keys/ finds it complete, and of two
  // processes making it at once, the second's rename fails and it uses the first's.
  const std::string tmp = dir + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(next_tmp_id.fetch_add(1));
  std::error_code ignored;
  std::filesystem::remove_all(tmp, ignored);
  if (::mkdir(tmp.c_str(), 0700) != 0) {
    return FailedPrecondition("creating " + tmp + ": " + std::strerror(errno));
  }
  auto fail = [&](Status status) {
    std::filesystem::remove_all(tmp, ignored);
    return status;
  };
  const std::string note = "# CURVE keys of this run (docs/security.md)\n";
  for (const auto& [name, text, mode] :
       {std::tuple{kServerPublic, server.public_key, 0644},
        std::tuple{kServerSecret, server.secret_key, 0600},
        std::tuple{kClientPublic, client.public_key, 0644},
        std::tuple{kClientSecret, client.secret_key, 0600},
        std::tuple{kAuthorizedClients,
                   "# the run's own clients; add a line per other client key\n" + client.public_key,
                   0644}}) {
    Status written = WriteNewFile(tmp + "/" + name, note + text + "\n", static_cast<mode_t>(mode));
    if (!written.ok()) return fail(written);
  }
  if (::rename(tmp.c_str(), dir.c_str()) != 0) {
    const int error = errno;
    if (error == EEXIST || error == ENOTEMPTY) {
      std::filesystem::remove_all(tmp, ignored);
      return Status::Ok();
    }
    return fail(FailedPrecondition("renaming " + tmp + " to " + dir + ": " + std::strerror(error)));
  }
  AZ_LOG(kInfo) << "made the run's CURVE keys in " << dir;
  return Status::Ok();
}

Result<CurveServerKeys> LoadServerKeys(const std::string& run_dir) {
  AZ_RETURN_IF_ERROR(EnsureRunKeys(run_dir));
  const std::string dir = RunKeysDir(run_dir);
  CurveServerKeys keys;
  AZ_ASSIGN_OR_RETURN(keys.server.public_key, ReadKeyFile(dir + "/" + kServerPublic, false));
  AZ_ASSIGN_OR_RETURN(keys.server.secret_key, ReadKeyFile(dir + "/" + kServerSecret, true));
  AZ_ASSIGN_OR_RETURN(keys.authorized_clients,
                      ReadAuthorizedClients(dir + "/" + kAuthorizedClients));
  return keys;
}

Result<CurveClientKeys> LoadClientKeys(const std::string& run_dir) {
  AZ_RETURN_IF_ERROR(EnsureRunKeys(run_dir));
  const std::string dir = RunKeysDir(run_dir);
  CurveClientKeys keys;
  AZ_ASSIGN_OR_RETURN(keys.client.public_key, ReadKeyFile(dir + "/" + kClientPublic, false));
  AZ_ASSIGN_OR_RETURN(keys.client.secret_key, ReadKeyFile(dir + "/" + kClientSecret, true));
  AZ_ASSIGN_OR_RETURN(keys.server_public_key, ReadKeyFile(dir + "/" + kServerPublic, false));
  return keys;
}

void ApplyCurveServer(zmq::socket_t& socket, const CurveServerKeys& keys,
                      const std::string& domain) {
  socket.set(zmq::sockopt::zap_domain, domain);
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.server.secret_key);
}

void ApplyCurveClient(zmq::socket_t& socket, const CurveClientKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.server_public_key);
  socket.set(zmq::sockopt::curve_publickey, keys.client.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.client.secret_key);
}

// --- ZapRegistration ---------------------------------------------------------------------------

Result<ZapRegistration> ZapRegistration::Create(std::vector<std::string> authorized_clients,
                                                std::string owner) {
  for (const std::string& key : authorized_clients) {
    if (!IsZ85Key(key)) return InvalidArgument("an authorized client key is not a Z85 CURVE key");
  }
  AZ_ASSIGN_OR_RETURN(std::string domain,
                      ZapHandler::Get().Add(std::move(authorized_clients), std::move(owner)));
  return ZapRegistration(std::move(domain));
}

ZapRegistration::ZapRegistration(ZapRegistration&& other) noexcept
    : domain_(std::exchange(other.domain_, {})) {}

ZapRegistration& ZapRegistration::operator=(ZapRegistration&& other) noexcept {
  if (this != &other) {
    if (!domain_.empty()) ZapHandler::Get().Remove(domain_);
    domain_ = std::exchange(other.domain_, {});
  }
  return *this;
}

ZapRegistration::~ZapRegistration() {
  if (!domain_.empty()) ZapHandler::Get().Remove(domain_);
}

std::uint64_t ZapRegistration::refused() const { return ZapHandler::Get().Refused(domain_); }

Result<std::optional<BindingCurve>> CurveForBinding(const std::string& endpoint,
                                                    std::optional<CurveServerKeys> given,
                                                    const std::string& run_dir,
                                                    const std::string& owner,
                                                    std::string_view options_field) {
  if (!IsTcpEndpoint(endpoint)) return std::optional<BindingCurve>();
  if (!given) {
    if (run_dir.empty()) {
      return InvalidArgument("the tcp:// " + owner + " needs CURVE keys: a run directory or " +
                             std::string(options_field));
    }
    Result<CurveServerKeys> loaded = LoadServerKeys(run_dir);
    if (!loaded.ok()) return loaded.status().WithContext("the CURVE keys of " + endpoint);
    given = std::move(loaded).value();
  }
  AZ_ASSIGN_OR_RETURN(ZapRegistration zap,
                      ZapRegistration::Create(given->authorized_clients, owner));
  return std::optional<BindingCurve>(BindingCurve{std::move(*given), std::move(zap)});
}

Result<std::optional<CurveClientKeys>> CurveForConnecting(const std::string& endpoint,
                                                         std::optional<CurveClientKeys> given,
                                                         const std::string& run_dir,
                                                         const std::string& what,
                                                         std::string_view options_field) {
  if (given || !IsTcpEndpoint(endpoint)) return given;
  if (run_dir.empty()) {
    return InvalidArgument("the tcp:// " + what + " needs CURVE keys: a run directory (its keys/) or " +
                           std::string(options_field));
  }
  Result<CurveClientKeys> keys = LoadClientKeys(run_dir);
  if (!keys.ok()) return keys.status().WithContext("the CURVE keys for " + endpoint);
  return std::optional<CurveClientKeys>(std::move(keys).value());
}

}  // namespace az::ipc
