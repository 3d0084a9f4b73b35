// The probe's side of the live control socket (docs/control-protocol.md, messages typed in
// probe/format/control_messages.h): a thread that accepts clients, streams what the runtime
// sees (rows only as a doorbell: the files have them), and hands pushed configs to the runtime.
// Events come from the model's threads through the RuntimeListener interface and are only queued
// there; the server thread does all socket I/O, never blocking an op. SPDX-License-Identifier:
// GPL-3.0-or-later
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe/format/control_messages.h"
#include "runtime.h"

namespace probe::runtime {

class ControlServer : public RuntimeListener {
public:
    explicit ControlServer(Runtime& runtime);
    ~ControlServer() override;

    // Creates the socket and starts the thread. Returns "" or why it could not.
    std::string start();
    // Says goodbye to the clients, closes and removes the socket.
    void stop();
    void abandonAfterFork();
    const std::string& socketPath() const { return socketPath_; }

    // RuntimeListener (called on the model's threads).
    void layerDiscovered(int id, const std::string& name, const std::string& type) override;
    void rowsWritten(int64_t round, uint64_t rows, uint64_t bytes) override;
    void configApplied(const format::OpConfig& config, const std::string& source) override;
    void configRejected(const std::string& reason, const std::string& source) override;
    void stateChanged(format::ProbeState state, const std::string& reason) override;
    void message(format::MessageLevel level, const std::string& text) override;

private:
    struct Client;
    void run();
    void post(const format::control::ProbeMessage& message);  // queued for every client
    void acceptClient();
    void readFrom(Client& client);
    void handleLine(Client& client, const std::string& line);
    void flush();
    void wake();

    Runtime& runtime_;
    std::string socketPath_;
    int listenFd_ = -1;
    int wakePipe_[2] = {-1, -1};
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> clientCount_{0};

    std::mutex queueMutex_;
    std::vector<std::string> pendingMessages_;  // whole lines
    // Rows written since the last doorbell, per round: rows, bytes.
    std::map<int64_t, std::pair<uint64_t, uint64_t>> pendingRowsWritten_;

    std::vector<std::unique_ptr<Client>> clients_;  // server thread only
    // Out of descriptors (the model's): new connections wait in the backlog until then, rather
    // than the listening socket waking the server thread at once, again and again.
    std::chrono::steady_clock::time_point acceptPausedUntil_{};
    // What the server thread polls, rebuilt each turn; a member so that a forked child (where
    // that thread does not exist) still reaches it.
    std::vector<pollfd> pollFds_;
};

}  // namespace probe::runtime
