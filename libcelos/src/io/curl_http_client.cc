// The libcurl HttpClient. One easy handle per (client, thread), kept between requests so that
// libcurl can reuse connections (keep-alive to Oozie and the name nodes); a handle is never
// shared between threads, which is all libcurl asks of us. A stream (a Kubernetes watch) has
// a handle of its own in a multi handle, so that a cancel from another thread wakes its poll.
#include <algorithm>
#include <cctype>
#include <map>
#include <thread>

#include <curl/curl.h>
#include <fmt/format.h>

#include "celos/http_client.h"
#include "celos/mutex.h"

namespace celos {

std::string HttpResponse::header(std::string_view name) const {
  auto same = [&](const std::string& candidate) {
    return candidate.size() == name.size() &&
           std::equal(candidate.begin(), candidate.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  };
  for (const auto& [key, value] : headers) {
    if (same(key)) return value;
  }
  return "";
}

std::string url_encode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

void HttpCancel::cancel() {
  MutexLock lock(mutex_);
  cancelled_ = true;
  if (wake_) wake_();
}

bool HttpCancel::cancelled() const {
  MutexLock lock(mutex_);
  return cancelled_;
}

bool HttpCancel::set_waker(std::function<void()> wake) {
  MutexLock lock(mutex_);
  wake_ = cancelled_ ? std::function<void()>{} : std::move(wake);
  return !cancelled_;
}

Result<HttpResponse> HttpClient::stream(const HttpRequest& request,
                                        const HttpStreamOptions& options) {
  if (options.cancel && options.cancel->cancelled()) {
    return fail(fmt::format("{} {} failed: cancelled", request.method, request.url),
                ErrorCode::kUnavailable);
  }
  auto response = send(request);
  if (!response) return response;
  if (options.on_status) options.on_status(response->status);
  if (response->status >= 200 && response->status < 300 && options.on_data) {
    options.on_data(response->body);
    response->body.clear();
  }
  return response;
}

namespace {

std::once_flag curl_init_once;

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// Header lines arrive one by one; with redirects followed, each hop's headers arrive, so a
// status line starts the list over and only the final response's headers remain.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<HttpHeaders*>(user);
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    headers->clear();
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    headers->emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return size * count;
}

// The request's method, and its body for methods other than GET and HEAD.
void set_method(CURL* curl, const HttpRequest& request) {
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    // POSTFIELDS with an explicit size sends the body for any method (PUT, DELETE too) and
    // an empty body as Content-Length: 0, which name nodes and Oozie expect.
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    if (request.method != "POST") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
  }
}

// A PEM text handed to libcurl (copied by it).
void set_blob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

void set_tls(CURL* curl, const HttpTlsOptions& tls) {
  if (!tls.ca_pem.empty()) set_blob(curl, CURLOPT_CAINFO_BLOB, tls.ca_pem);
  if (!tls.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.cert_pem.empty()) set_blob(curl, CURLOPT_SSLCERT_BLOB, tls.cert_pem);
  if (!tls.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_pem.empty()) set_blob(curl, CURLOPT_SSLKEY_BLOB, tls.key_pem);
  if (!tls.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, tls.key_file.c_str());
  if (tls.insecure) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;

// What the callbacks of one stream() share.
struct StreamState {
  const HttpStreamOptions* options;
  HttpResponse* response;
  CURL* curl;
  int status = 0;        // the final answer's, once its head is complete
  bool stopped = false;  // on_data asked to stop
};

size_t on_stream_header(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  on_header(data, size, count, &state->response->headers);
  const std::string_view line(data, size * count);
  if (line == "\r\n" || line == "\n") {  // the end of a head: 1xx heads come before the answer's
    long status = 0;
    curl_easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200) {
      state->status = static_cast<int>(status);
      if (state->options->on_status) state->options->on_status(state->status);
    }
  }
  return size * count;
}

size_t on_stream_body(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  const std::size_t n = size * count;
  if (state->status >= 200 && state->status < 300 && state->options->on_data) {
    if (!state->options->on_data(std::string_view(data, n))) {
      state->stopped = true;
      return 0;  // ends the transfer (CURLE_WRITE_ERROR)
    }
  } else {
    state->response->body.append(data, n);
  }
  return n;
}

// Drives one transfer of `multi` to its end, or until `cancel` is cancelled.
CURLcode run(CURLM* multi, const HttpCancel* cancel) {
  for (int running = 1; running > 0;) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) return CURLE_FAILED_INIT;
    if (running == 0 || (cancel != nullptr && cancel->cancelled())) break;
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
    if (message->msg == CURLMSG_DONE) return message->data.result;
  }
  return CURLE_OK;
}

class CurlHttpClient : public HttpClient {
 public:
  explicit CurlHttpClient(HttpClientOptions options) : options_(std::move(options)) {
    std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  Result<HttpResponse> send(const HttpRequest& request) override {
    CURL* curl = handle_for_this_thread();
    if (curl == nullptr) return failure(request, "cannot create a curl handle");
    curl_easy_reset(curl);  // keeps the connection cache, forgets the last request's options

    HttpResponse response;
    char error_text[CURL_ERROR_SIZE] = {};
    auto headers = prepare(curl, request, error_text);
    if (!headers) return tl::unexpected(headers.error());
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);

    CURLcode code = curl_easy_perform(curl);
    if (code != CURLE_OK) {
      return failure(request, error_text[0] != '\0' ? std::string(error_text)
                                                    : std::string(curl_easy_strerror(code)));
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    return response;
  }

  // A handle of its own (a stream holds it for minutes) in a multi handle of its own, whose
  // poll the cancel wakes.
  Result<HttpResponse> stream(const HttpRequest& request,
                              const HttpStreamOptions& options) override {
    EasyHandle easy(curl_easy_init());
    MultiHandle multi(curl_multi_init());
    if (!easy || !multi) return failure(request, "cannot create a curl handle");
    HttpResponse response;
    StreamState state{&options, &response, easy.get()};
    char error_text[CURL_ERROR_SIZE] = {};
    auto headers = prepare(easy.get(), request, error_text);
    if (!headers) return tl::unexpected(headers.error());
    curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
    curl_easy_setopt(easy.get(), CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, on_stream_body);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &state);
    curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, on_stream_header);
    curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, &state);
    curl_multi_add_handle(multi.get(), easy.get());
    CURLM* m = multi.get();
    if (options.cancel && !options.cancel->set_waker([m] { curl_multi_wakeup(m); })) {
      curl_multi_remove_handle(m, easy.get());
      return failure(request, "cancelled");
    }
    const CURLcode code = run(m, options.cancel.get());
    if (options.cancel) options.cancel->set_waker({});  // before the multi handle goes
    curl_multi_remove_handle(m, easy.get());
    if (options.cancel && options.cancel->cancelled()) return failure(request, "cancelled");
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && state.stopped)) {
      return failure(request, error_text[0] != '\0' ? std::string(error_text)
                                                    : std::string(curl_easy_strerror(code)));
    }
    response.status = state.status;
    return response;
  }

 private:
  static tl::unexpected<Error> failure(const HttpRequest& request, const std::string& why) {
    return fail(fmt::format("{} {} failed: {}", request.method, request.url, why),
                ErrorCode::kUnavailable);
  }

  // The request's URL, headers, method and TLS, and the client's options, set on `curl`; the
  // returned header list must live until the transfer ends.
  Result<Slist> prepare(CURL* curl, const HttpRequest& request, char* error_text) const {
    Slist headers;
    auto add_header = [&](const std::string& line) {
      curl_slist* head = curl_slist_append(headers.get(), line.c_str());
      if (head == nullptr) return false;
      static_cast<void>(headers.release());
      headers.reset(head);
      return true;
    };
    for (const auto& [name, value] : request.headers) {
      if (!add_header(fmt::format("{}: {}", name, value))) return failure(request, "out of memory");
    }
    // libcurl would otherwise send "Expect: 100-continue" for larger bodies and wait for it.
    if (!add_header("Expect:")) return failure(request, "out of memory");

    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM tricks in a threaded server
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    if (options_.negotiate) {
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_NEGOTIATE);
      curl_easy_setopt(curl, CURLOPT_USERPWD, ":");  // the user comes from the Kerberos ticket
    }
    set_tls(curl, options_.tls);
    set_method(curl, request);
    return headers;
  }

  CURL* handle_for_this_thread() {
    MutexLock lock(mutex_);
    EasyHandle& handle = handles_[std::this_thread::get_id()];
    if (!handle) handle.reset(curl_easy_init());
    return handle.get();
  }

  HttpClientOptions options_;
  Mutex mutex_;
  // Handles live as long as the client; a server has a small fixed set of threads, so the
  // map stays small.
  std::map<std::thread::id, EasyHandle> handles_ GUARDED_BY(mutex_);
};

}  // namespace

std::shared_ptr<HttpClient> make_curl_http_client(HttpClientOptions options) {
  return std::make_shared<CurlHttpClient>(std::move(options));
}

}  // namespace celos
