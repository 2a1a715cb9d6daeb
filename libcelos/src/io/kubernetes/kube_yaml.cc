// A small reader for kubeconfig YAML (kube_yaml.h). Lines are read once into (indent, text);
// a sequence item `- key: value` becomes the line `key: value` at the item's column, so the
// mapping it starts continues on the lines below at that column, as YAML reads it.
#include "io/kubernetes/kube_yaml.h"

#include <vector>

#include <fmt/format.h>

namespace celos::kube {
namespace {

namespace json = boost::json;

struct Line {
  int indent = 0;
  std::string text;
  int number = 0;
};

// Where a comment starts: a '#' at the start or after a blank, outside quotes.
std::size_t comment_start(const std::string& line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      if (i == 0 || line[i - 1] == ' ' || line[i - 1] == ':' || line[i - 1] == '-') quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return i;
    }
  }
  return std::string::npos;
}

std::vector<Line> split_lines(const std::string& text) {
  std::vector<Line> lines;
  std::size_t start = 0;
  for (int number = 1; start <= text.size(); ++number) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    line = line.substr(0, comment_start(line));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line == "---" || line == "...") continue;
    lines.push_back({static_cast<int>(first), line.substr(first), number});
    if (end == text.size()) break;
  }
  return lines;
}

class Reader {
 public:
  explicit Reader(std::vector<Line> lines) : lines_(std::move(lines)) {}

  Result<json::value> document() {
    if (lines_.empty()) return json::value(json::object{});
    auto value = node();
    if (value && pos_ < lines_.size()) {
      return error(lines_[pos_], "this line is not part of the document above it (indentation?)");
    }
    return value;
  }

 private:
  static tl::unexpected<Error> error(const Line& line, const std::string& what) {
    return fail(fmt::format("line {}: {}", line.number, what), ErrorCode::kInvalid);
  }

  static bool is_item(const std::string& text) { return text == "-" || text.starts_with("- "); }

  // The position of the ':' that ends a mapping key, or npos.
  static std::size_t key_end(const std::string& text) {
    char quote = 0;
    if (text[0] == '"' || text[0] == '\'') quote = text[0];
    for (std::size_t i = quote ? 1 : 0; i < text.size(); ++i) {
      if (quote) {
        if (text[i] == quote) quote = 0;
        continue;
      }
      if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ')) return i;
      if (text[i] == '{' || text[i] == '[') return std::string::npos;
    }
    return std::string::npos;
  }

  Result<json::value> node() {
    const Line& line = lines_[pos_];
    if (is_item(line.text)) return sequence(line.indent);
    if (key_end(line.text) != std::string::npos) return mapping(line.indent);
    ++pos_;
    return scalar(line, line.text);
  }

  // The value after `key:` or `-` when it is on the following lines (or null).
  Result<json::value> nested(int indent, bool same_indent_items) {
    if (pos_ >= lines_.size()) return json::value(nullptr);
    const Line& next = lines_[pos_];
    if (next.indent > indent ||
        (same_indent_items && next.indent == indent && is_item(next.text))) {
      return node();
    }
    return json::value(nullptr);
  }

  Result<json::value> mapping(int indent) {
    json::object out;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && !is_item(lines_[pos_].text)) {
      const Line line = lines_[pos_];
      const std::size_t colon = key_end(line.text);
      if (colon == std::string::npos) return error(line, "expected `key: value`");
      auto key = scalar(line, line.text.substr(0, colon));
      if (!key) return key;
      std::string rest = line.text.substr(colon + 1);
      rest.erase(0, rest.find_first_not_of(' '));
      ++pos_;
      auto value = rest.empty() ? nested(indent, true) : scalar(line, rest);
      if (!value) return value;
      out[key->is_string() ? std::string(key->as_string()) : json::serialize(*key)] =
          std::move(*value);
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return error(lines_[pos_], "unexpected indentation");
    }
    return json::value(std::move(out));
  }

  Result<json::value> sequence(int indent) {
    json::array out;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && is_item(lines_[pos_].text)) {
      Line& line = lines_[pos_];
      if (line.text == "-") {
        ++pos_;
        auto value = nested(indent, false);
        if (!value) return value;
        out.push_back(std::move(*value));
        continue;
      }
      const std::size_t content = line.text.find_first_not_of(' ', 1);
      line.indent += static_cast<int>(content);
      line.text = line.text.substr(content);
      auto value = node();
      if (!value) return value;
      out.push_back(std::move(*value));
    }
    return json::value(std::move(out));
  }

  static void skip_blanks(const std::string& text, std::size_t& pos) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  }

  // A flow scalar: quoted, or plain up to the next `,` `]` `}` (or `:` in a mapping's key).
  static Result<json::value> flow_scalar(const std::string& text, std::size_t& pos, bool key) {
    skip_blanks(text, pos);
    const std::size_t start = pos;
    if (pos < text.size() && (text[pos] == '"' || text[pos] == '\'')) {
      const char quote = text[pos];
      for (++pos; pos < text.size(); ++pos) {
        if (quote == '"' && text[pos] == '\\') {
          ++pos;
        } else if (text[pos] == quote) {
          if (quote == '\'' && pos + 1 < text.size() && text[pos + 1] == '\'') {
            ++pos;
            continue;
          }
          break;
        }
      }
      if (pos >= text.size()) return fail("unterminated quote");
      ++pos;
      return scalar(Line{}, text.substr(start, pos - start));
    }
    while (pos < text.size() && text[pos] != ',' && text[pos] != ']' && text[pos] != '}' &&
           !(key && text[pos] == ':')) {
      ++pos;
    }
    std::string plain = text.substr(start, pos - start);
    while (!plain.empty() && plain.back() == ' ') plain.pop_back();
    return scalar(Line{}, plain);
  }

  // A flow collection ({a: b, c: [d, e]}) starting at text[pos].
  static Result<json::value> flow(const std::string& text, std::size_t& pos) {
    skip_blanks(text, pos);
    if (pos >= text.size() || (text[pos] != '{' && text[pos] != '[')) {
      return flow_scalar(text, pos, false);
    }
    const bool mapping = text[pos] == '{';
    const char close = mapping ? '}' : ']';
    json::object object;
    json::array array;
    for (++pos;;) {
      skip_blanks(text, pos);
      if (pos < text.size() && text[pos] == close) break;
      if (mapping) {
        auto key = flow_scalar(text, pos, true);
        if (!key || !key->is_string() || pos >= text.size() || text[pos] != ':') {
          return fail("expected `key: value`");
        }
        ++pos;
        auto value = flow(text, pos);
        if (!value) return value;
        object[key->as_string()] = std::move(*value);
      } else {
        auto value = flow(text, pos);
        if (!value) return value;
        array.push_back(std::move(*value));
      }
      skip_blanks(text, pos);
      if (pos < text.size() && text[pos] == ',')
        ++pos;
      else if (pos >= text.size() || text[pos] != close)
        return fail("expected , or " + std::string(1, close));
    }
    ++pos;
    return mapping ? json::value(std::move(object)) : json::value(std::move(array));
  }

  static Result<json::value> scalar(const Line& line, std::string text) {
    if (text.empty()) return json::value(nullptr);
    const char c = text[0];
    if (c == '&' || c == '*' || c == '!' || c == '|' || c == '>') {
      return error(line, fmt::format("`{}` (anchors, tags, block scalars) is not supported", c));
    }
    if (c == '{' || c == '[') {
      std::size_t pos = 0;
      auto value = flow(text, pos);
      skip_blanks(text, pos);
      if (!value || pos != text.size()) {
        return error(line, "cannot read the flow collection " + text);
      }
      return value;
    }
    if (c == '\'') {
      if (text.size() < 2 || text.back() != '\'') return error(line, "unterminated '...'");
      std::string out;
      for (std::size_t i = 1; i + 1 < text.size(); ++i) {
        out += text[i];
        if (text[i] == '\'' && text[i + 1] == '\'') ++i;
      }
      return json::value(out);
    }
    if (c == '"') {
      boost::system::error_code ec;
      json::value value = json::parse(text, ec);  // JSON's escapes are YAML's common ones
      if (ec || !value.is_string()) return error(line, "bad double-quoted string: " + text);
      return value;
    }
    if (text == "~" || text == "null") return json::value(nullptr);
    return json::value(text);
  }

  std::vector<Line> lines_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<json::value> parse_yaml(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    boost::system::error_code ec;
    json::value value = json::parse(text, ec);
    if (ec) return fail("not valid JSON: " + ec.message(), ErrorCode::kInvalid);
    return value;
  }
  if (text.find('\t') != std::string::npos && text.find("\n\t") != std::string::npos) {
    return fail("tabs are not allowed as indentation in YAML", ErrorCode::kInvalid);
  }
  return Reader(split_lines(text)).document();
}

}  // namespace celos::kube
