// SPDX-License-Identifier: GPL-3.0-or-later
#include "control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "after_fork.h"
#include "probe/format/control_messages.h"
#include "probe/format/control_protocol.h"
#include "probe/format/json_input.h"
#include "probe/format/thread_name.h"

namespace probe::runtime {
namespace {

namespace control = format::control;

constexpr size_t kMaxClientBacklog = 64u << 20;  // bytes; beyond, the client is dropped
// Each client is a descriptor of the model's own process: without a limit, a program holding
// connections open (19,898 of them in an attack) used them all up, and the model failed to open
// its own files. An application window takes one.
constexpr size_t kMaxClients = 32;
constexpr auto kAcceptPauseWhenOutOfDescriptors = std::chrono::milliseconds(500);
constexpr int kFlushIntervalMs = 100;

std::string errorLine(const std::string& text) {
    return control::toLine(control::Notice{format::MessageLevel::Error, text});
}

control::ConfigSource sourceOf(const std::string& source) {
    return control::configSourceFromString(source).value_or(control::ConfigSource::File);
}

// The id of the set_config request the server thread is applying (null: none), so the
// runtime's answer, which comes back through the listener, can carry it.
thread_local nlohmann::json currentRequest;

}  // namespace

struct ControlServer::Client {
    int fd = -1;
    std::string in, out;
    bool closing = false;
    bool skippingLongLine = false;  // dropping the rest of a line over the limit
    bool greeted = false;           // it said hello in our protocol
    bool closeWhenSent = false;     // refused: closed once its last words are out
};

ControlServer::ControlServer(Runtime& runtime) : runtime_(runtime) {}

ControlServer::~ControlServer() {
    stop();
}

std::string ControlServer::start() {
    std::string error;
    auto dir = format::controlSocketDirectory(true, &error);
    if (!dir) return error;
    socketPath_ = *dir + "/" + format::controlSocketName(::getpid());
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socketPath_.size() >= sizeof(address.sun_path))
        return "socket path too long: " + socketPath_;
    // Bound under a hidden name and renamed into place once listening: a socket listed under
    // its name always accepts (bound but not yet listening, a connect is refused, and an
    // application attaching right then would give up). No umask either: it is the whole
    // process's, and a model thread creating a file meanwhile would get our mode.
    const std::string boundPath = *dir + "/." + format::controlSocketName(::getpid()) + ".new";
    if (boundPath.size() >= sizeof(address.sun_path)) return "socket path too long: " + boundPath;
    std::strncpy(address.sun_path, boundPath.c_str(), sizeof(address.sun_path) - 1);
    ::unlink(boundPath.c_str());
    listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listenFd_ < 0) return std::string("socket: ") + std::strerror(errno);
    // The directory is this user's alone (0700); the socket is made 0600 before anyone can
    // find it.
    if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::chmod(boundPath.c_str(), 0600) != 0 || ::listen(listenFd_, 8) != 0 ||
        ::rename(boundPath.c_str(), socketPath_.c_str()) != 0) {
        error = "cannot listen on " + socketPath_ + ": " + std::strerror(errno);
        ::close(listenFd_);
        listenFd_ = -1;
        ::unlink(boundPath.c_str());
        return error;
    }
    if (::pipe2(wakePipe_, O_CLOEXEC | O_NONBLOCK) != 0) wakePipe_[0] = wakePipe_[1] = -1;
    stop_ = false;
    thread_ = std::thread([this] {
        format::nameThisThread("probe-control");
        run();
    });
    return "";
}

void ControlServer::stop() {
    if (!thread_.joinable()) return;
    post(control::StateChanged{format::ProbeState::Exiting, "the probe stopped"});
    stop_ = true;
    wake();
    thread_.join();
    for (int* fd : {&listenFd_, &wakePipe_[0], &wakePipe_[1]}) {
        if (*fd >= 0) ::close(*fd);
        *fd = -1;
    }
    ::unlink(socketPath_.c_str());
}

void ControlServer::abandonAfterFork() {
    forgetThreadAfterFork(thread_);
    for (auto& client : clients_) ::close(client->fd);
    for (int* fd : {&listenFd_, &wakePipe_[0], &wakePipe_[1]}) {
        if (*fd >= 0) ::close(*fd);
        *fd = -1;
    }
    clientCount_ = 0;
}

void ControlServer::wake() {
    if (wakePipe_[1] >= 0) {
        char c = 1;
        if (::write(wakePipe_[1], &c, 1) < 0) {
        }
    }
}

void ControlServer::post(const control::ProbeMessage& message) {
    std::string line = control::toLine(message);
    std::lock_guard<std::mutex> lock(queueMutex_);
    pendingMessages_.push_back(std::move(line));
}

// --- events from the runtime (model threads): queue only ---------------------------------------

void ControlServer::layerDiscovered(int id, const std::string& name, const std::string& type) {
    if (clientCount_.load(std::memory_order_relaxed) == 0) return;
    post(control::Layer{std::to_string(id), name, type});
}

void ControlServer::rowsWritten(int64_t round, uint64_t rows, uint64_t bytes) {
    if (clientCount_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard<std::mutex> lock(queueMutex_);
    auto& pending = pendingRowsWritten_[round];
    pending.first += rows;
    pending.second += bytes;
}

void ControlServer::configApplied(const format::OpConfig& config, const std::string& source) {
    const auto from = sourceOf(source);
    post(control::ConfigApplied{config.toJson(), from,
                                from == control::ConfigSource::Client ? currentRequest : nullptr});
    wake();
}

void ControlServer::configRejected(const std::string& reason, const std::string& source) {
    const auto from = sourceOf(source);
    post(control::ConfigRejected{reason, from,
                                 from == control::ConfigSource::Client ? currentRequest : nullptr});
    wake();
}

void ControlServer::stateChanged(format::ProbeState state, const std::string& reason) {
    post(control::StateChanged{state, reason});
    wake();
}

void ControlServer::message(format::MessageLevel level, const std::string& text) {
    post(control::Notice{level, text});
}

// --- the server thread ---------------------------------------------------------------------------

void ControlServer::run() {
    auto lastFlush = std::chrono::steady_clock::now();
    while (!stop_.load()) {
        std::vector<pollfd>& fds = pollFds_;
        fds.clear();
        const bool acceptPaused = std::chrono::steady_clock::now() < acceptPausedUntil_;
        fds.push_back({listenFd_, static_cast<short>(acceptPaused ? 0 : POLLIN), 0});
        fds.push_back({wakePipe_[0], POLLIN, 0});
        for (auto& client : clients_)
            fds.push_back(
                {client->fd, static_cast<short>(POLLIN | (client->out.empty() ? 0 : POLLOUT)), 0});
        ::poll(fds.data(), fds.size(), kFlushIntervalMs);
        if (fds[1].revents & POLLIN) {
            char buffer[64];
            while (::read(wakePipe_[0], buffer, sizeof buffer) > 0) {
            }
        }
        // The clients polled are the first fds.size() - 2; accepting adds more after them.
        const size_t polledClients = fds.size() - 2;
        for (size_t i = 0; i < polledClients; ++i) {
            const short revents = fds[i + 2].revents;
            if (revents & (POLLIN | POLLHUP | POLLERR)) readFrom(*clients_[i]);
        }
        if (fds[0].revents & POLLIN) acceptClient();
        const auto now = std::chrono::steady_clock::now();
        if (now - lastFlush >= std::chrono::milliseconds(kFlushIntervalMs) ||
            (fds[1].revents & POLLIN)) {
            flush();
            lastFlush = now;
        }
        // Write what each client can take; drop the ones that are gone or hopelessly behind.
        for (auto& client : clients_) {
            while (!client->out.empty() && !client->closing) {
                const ssize_t n = ::send(client->fd, client->out.data(), client->out.size(),
                                         MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0) {
                    client->out.erase(0, static_cast<size_t>(n));
                } else {
                    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                        client->closing = true;
                    break;
                }
            }
            if (client->out.size() > kMaxClientBacklog) client->closing = true;
            if (client->closeWhenSent && client->out.empty()) client->closing = true;
        }
        for (auto it = clients_.begin(); it != clients_.end();) {
            if ((*it)->closing) {
                ::close((*it)->fd);
                it = clients_.erase(it);
                clientCount_.fetch_sub(1);
            } else {
                ++it;
            }
        }
    }
    // Last words, best effort, then close.
    flush();
    for (auto& client : clients_) {
        if (!client->out.empty()) {
            const ssize_t n = ::send(client->fd, client->out.data(), client->out.size(),
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)n;
        }
        ::close(client->fd);
    }
    clients_.clear();
    clientCount_ = 0;
}

void ControlServer::acceptClient() {
    while (true) {
        const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                acceptPausedUntil_ =
                    std::chrono::steady_clock::now() + kAcceptPauseWhenOutOfDescriptors;
            return;
        }
        // Only this user's processes may watch the model or change its config, even if the
        // socket's permissions were widened after it was created.
        ucred peer{};
        socklen_t length = sizeof peer;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
            peer.uid != ::geteuid()) {
            ::close(fd);
            continue;
        }
        if (clients_.size() >= kMaxClients) {
            // `refused`, as to a client of another protocol: the application says why it could
            // not attach (it said only that the probe closed the connection).
            const std::string refusal = control::toLine(
                control::Refused{control::kProtocolVersion,
                                 "the probe serves " + std::to_string(kMaxClients) +
                                     " clients already; connect again once one of them has gone"});
            const ssize_t n =
                ::send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)n;
            ::close(fd);
            continue;
        }
        auto client = std::make_unique<Client>();
        client->fd = fd;
        const auto snapshot = runtime_.currentConfig();
        control::Hello hello = runtime_.describe();
        hello.config = snapshot ? snapshot->config.toJson() : nlohmann::json::object();
        client->out = control::toLine(hello);
        for (const auto& layer : runtime_.knownLayers())
            client->out +=
                control::toLine(control::Layer{std::to_string(layer.id), layer.name, layer.type});
        clients_.push_back(std::move(client));
        clientCount_.fetch_add(1);
    }
}

void ControlServer::readFrom(Client& client) {
    char buffer[65536];
    while (!client.closing && !client.closeWhenSent) {
        const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            client.closing = true;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        client.in.append(buffer, static_cast<size_t>(n));
        // Whole lines are handled as they arrive; only the unfinished one is kept, up to the limit.
        size_t start = 0, newline;
        while ((newline = client.in.find('\n', start)) != std::string::npos) {
            if (client.skippingLongLine) {
                client.skippingLongLine = false;
            } else if (newline > start && !client.closeWhenSent) {
                try {
                    handleLine(client, client.in.substr(start, newline - start));
                } catch (
                    const std::exception& e) {  // out of memory: this line fails, the model goes on
                    client.out +=
                        errorLine(std::string("the message could not be handled: ") + e.what());
                }
            }
            start = newline + 1;
        }
        client.in.erase(0, start);
        if (client.in.size() > format::kControlLineLimits.maxBytes) {
            if (!client.skippingLongLine)
                client.out += errorLine("a line longer than " +
                                        std::to_string(format::kControlLineLimits.maxBytes) +
                                        " bytes was refused");
            client.skippingLongLine = true;
            client.in.clear();
        }
    }
}

void ControlServer::handleLine(Client& client, const std::string& text) {
    auto received = control::parseClientMessage(text);
    if (!received.problem.empty()) {
        client.out += errorLine(received.problem);
        return;
    }
    if (received.ignored()) return;  // a newer client's message
    auto refuse = [&](std::string reason) {
        client.out +=
            control::toLine(control::Refused{control::kProtocolVersion, std::move(reason)});
        client.closeWhenSent = true;
    };
    if (auto* hello = std::get_if<control::ClientHello>(&*received.message)) {
        if (hello->protocol == control::kProtocolVersion)
            client.greeted = true;
        else
            refuse("this probe speaks control protocol " +
                   std::to_string(control::kProtocolVersion) + ", the client " +
                   std::to_string(hello->protocol) +
                   ": use Probe Studio and a probe of the same version");
        return;
    }
    if (!client.greeted) {
        // Clients of protocol 1 asked without saying hello; they would misread what follows.
        refuse(std::string("this probe speaks control protocol ") +
               std::to_string(control::kProtocolVersion) + "; the client asked \"" +
               control::typeName(*received.message) +
               "\" without saying hello first, as clients of protocol 1 do: update Probe Studio to "
               "the probe's "
               "version");
        return;
    }
    if (auto* ping = std::get_if<control::Ping>(&*received.message)) {
        client.out += control::toLine(control::Pong{std::move(ping->id)});
    } else if (auto* set = std::get_if<control::SetConfig>(&*received.message)) {
        currentRequest = set->id;
        if (!set->config.is_object())
            client.out += control::toLine(control::ConfigRejected{
                "set_config needs a \"config\" object", control::ConfigSource::Client, set->id});
        else
            runtime_.applyConfigText(format::dumpJson(set->config),
                                     "client");  // answers through configApplied/Rejected
        currentRequest = nullptr;
        flush();
    }
}

void ControlServer::flush() {
    std::vector<std::string> messages;
    std::map<int64_t, std::pair<uint64_t, uint64_t>> rowsWritten;
    {
        std::lock_guard<std::mutex> lock(queueMutex_);
        messages.swap(pendingMessages_);
        rowsWritten.swap(pendingRowsWritten_);
    }
    std::string out;
    for (const auto& m : messages) out += m;
    for (const auto& [round, written] : rowsWritten)
        out += control::toLine(control::RowsWritten{round, written.first, written.second});
    if (out.empty()) return;
    for (auto& client : clients_)
        if (!client->closeWhenSent) client->out += out;
}

}  // namespace probe::runtime
