#include "frameworks/kineto/json_scan.h"

#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace reverie::kineto {
namespace internal {
namespace {

void ClassifyPortable(const char* p, size_t blocks, BlockMasks* out) {
  for (size_t b = 0; b < blocks; ++b, p += 64) {
    BlockMasks m;
    for (int i = 0; i < 64; ++i) {
      const uint64_t bit = uint64_t{1} << i;
      switch (p[i]) {
        case '"': m.quote |= bit; break;
        case '\\': m.backslash |= bit; break;
        case '{': case '[': m.open |= bit; break;
        case '}': case ']': m.close |= bit; break;
        case '\0': m.nul |= bit; break;
        default: break;
      }
    }
    out[b] = m;
  }
}

#if defined(__x86_64__)
// '[' | 0x20 == '{' and ']' | 0x20 == '}': one compare finds both brackets.

void ClassifySse2(const char* p, size_t blocks, BlockMasks* out) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i fold = _mm_set1_epi8(0x20);
  const __m128i zero = _mm_setzero_si128();
  for (size_t b = 0; b < blocks; ++b, p += 64) {
    BlockMasks m;
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      const __m128i folded = _mm_or_si128(v, fold);
      const int shift = 16 * i;
      auto bits = [shift](__m128i eq) {
        return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << shift;
      };
      m.quote |= bits(_mm_cmpeq_epi8(v, quote));
      m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
      m.open |= bits(_mm_cmpeq_epi8(folded, open));
      m.close |= bits(_mm_cmpeq_epi8(folded, close));
      m.nul |= bits(_mm_cmpeq_epi8(v, zero));
    }
    out[b] = m;
  }
}

__attribute__((target("avx2"), always_inline)) inline uint64_t Bits256(__m256i eq_lo,
                                                                       __m256i eq_hi) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(eq_lo))) |
         static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(eq_hi))) << 32;
}

__attribute__((target("avx2"))) void ClassifyAvx2(const char* p, size_t blocks,
                                                  BlockMasks* out) {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i open = _mm256_set1_epi8('{');
  const __m256i close = _mm256_set1_epi8('}');
  const __m256i fold = _mm256_set1_epi8(0x20);
  const __m256i zero = _mm256_setzero_si256();
  for (size_t b = 0; b < blocks; ++b, p += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i flo = _mm256_or_si256(lo, fold);
    const __m256i fhi = _mm256_or_si256(hi, fold);
    BlockMasks& m = out[b];
    m.quote = Bits256(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote));
    m.backslash = Bits256(_mm256_cmpeq_epi8(lo, backslash), _mm256_cmpeq_epi8(hi, backslash));
    m.open = Bits256(_mm256_cmpeq_epi8(flo, open), _mm256_cmpeq_epi8(fhi, open));
    m.close = Bits256(_mm256_cmpeq_epi8(flo, close), _mm256_cmpeq_epi8(fhi, close));
    m.nul = Bits256(_mm256_cmpeq_epi8(lo, zero), _mm256_cmpeq_epi8(hi, zero));
  }
}

__attribute__((target("avx512f,avx512bw"))) void ClassifyAvx512(const char* p, size_t blocks,
                                                                BlockMasks* out) {
  const __m512i quote = _mm512_set1_epi8('"');
  const __m512i backslash = _mm512_set1_epi8('\\');
  const __m512i open = _mm512_set1_epi8('{');
  const __m512i close = _mm512_set1_epi8('}');
  const __m512i fold = _mm512_set1_epi8(0x20);
  for (size_t b = 0; b < blocks; ++b, p += 64) {
    const __m512i v = _mm512_loadu_si512(p);
    const __m512i folded = _mm512_or_si512(v, fold);
    BlockMasks& m = out[b];
    m.quote = _mm512_cmpeq_epi8_mask(v, quote);
    m.backslash = _mm512_cmpeq_epi8_mask(v, backslash);
    m.open = _mm512_cmpeq_epi8_mask(folded, open);
    m.close = _mm512_cmpeq_epi8_mask(folded, close);
    m.nul = _mm512_testn_epi8_mask(v, v);
  }
}
#endif

}  // namespace

ClassifyFn BestClassifier() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bw")) return &ClassifyAvx512;
  if (__builtin_cpu_supports("avx2")) return &ClassifyAvx2;
  return &ClassifySse2;
#else
  return &ClassifyPortable;
#endif
}

std::vector<ClassifyFn> AvailableClassifiers() {
  std::vector<ClassifyFn> fns = {&ClassifyPortable};
#if defined(__x86_64__)
  __builtin_cpu_init();
  fns.push_back(&ClassifySse2);
  if (__builtin_cpu_supports("avx2")) fns.push_back(&ClassifyAvx2);
  if (__builtin_cpu_supports("avx512bw")) fns.push_back(&ClassifyAvx512);
#endif
  return fns;
}

uint64_t EscapedChars(uint64_t backslash, uint64_t* carry) {
  uint64_t escaped = *carry;
  *carry = 0;
  // A backslash that is itself escaped starts nothing; runs pair up left to
  // right, which is how JSON reads them (and why a run cut by the block
  // boundary needs only the one carry bit).
  uint64_t runs = backslash & ~escaped;
  while (runs != 0) {
    const int start = __builtin_ctzll(runs);
    const uint64_t from_start = runs >> start;
    const int length = ~from_start == 0 ? 64 - start : __builtin_ctzll(~from_start);
    const int end = start + length;  // the character after the run
    if (length % 2 == 1) {
      if (end < 64) {
        escaped |= uint64_t{1} << end;
      } else {
        *carry = 1;
      }
    }
    runs = end >= 64 ? 0 : runs & (~uint64_t{0} << end);
  }
  return escaped;
}

}  // namespace internal

namespace {

constexpr size_t kNone = JsonLayout::kNone;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bit i = parity of the set bits at positions <= i: 1 from an opening
// quote up to (not including) its closing quote.
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

class Scanner {
 public:
  Scanner(std::string_view text, size_t chunk_bytes) : text_(text), chunk_(chunk_bytes) {}

  JsonLayout Run() {
    size_t first = 0;
    while (first < text_.size() && IsSpace(text_[first])) ++first;
    if (first == text_.size()) return out_;
    if (text_[first] == '{') {
      out_.form = JsonLayout::Form::kObject;
    } else if (text_[first] == '[') {
      out_.form = JsonLayout::Form::kArray;
    } else {
      return out_;
    }
    uint64_t nul_any = ScanBlocks();
    if (nul_any != 0) {
      const void* nul = std::memchr(text_.data(), 0, text_.size());
      if (nul != nullptr) out_.first_nul = static_cast<size_t>(static_cast<const char*>(nul) - text_.data());
    }
    if (out_.value_end != kNone) {
      size_t q = out_.value_end;
      while (q < text_.size() && IsSpace(text_[q])) ++q;
      if (q < text_.size()) out_.trailing = q;
    } else if (out_.form == JsonLayout::Form::kArray && events_depth_ == 1) {
      FindCompleteEnd();
    }
    return out_;
  }

 private:
  // The block loop, classifying kBatch blocks at a time; returns the OR of
  // the blocks' NUL masks.
  uint64_t ScanBlocks() {
    constexpr size_t kBatch = 64;
    static const internal::ClassifyFn classify = internal::BestClassifier();
    internal::BlockMasks masks[kBatch];
    uint64_t in_string = 0, escape_carry = 0, nul_any = 0;
    char tail[64];
    const size_t n = text_.size();
    for (size_t base = 0; base < n;) {
      const size_t whole = (n - base) / 64;
      size_t blocks = whole < kBatch ? whole : kBatch;
      if (blocks == 0) {
        std::memset(tail, ' ', sizeof(tail));
        std::memcpy(tail, text_.data() + base, n - base);
        classify(tail, 1, masks);
        blocks = 1;
      } else {
        classify(text_.data() + base, blocks, masks);
      }
      for (size_t b = 0; b < blocks; ++b, base += 64) {
        const internal::BlockMasks& m = masks[b];
        nul_any |= m.nul;
        const uint64_t escaped = (m.backslash | escape_carry) == 0
                                     ? 0
                                     : internal::EscapedChars(m.backslash, &escape_carry);
        const uint64_t strings = PrefixXor(m.quote & ~escaped) ^ in_string;
        in_string = uint64_t{0} - (strings >> 63);
        uint64_t brackets = (m.open | m.close) & ~strings;
        while (brackets != 0) {
          const int i = __builtin_ctzll(brackets);
          brackets &= brackets - 1;
          const bool go_on = (m.open >> i & 1) ? OnOpen(base + i) : OnClose(base + i);
          if (!go_on) return nul_any;
        }
      }
    }
    return nul_any;
  }

  bool OnOpen(size_t pos) {
    ++depth_;
    open_kinds_.push_back(text_[pos]);
    if (depth_ == 1) {
      if (out_.form == JsonLayout::Form::kArray) EnterEvents(pos, 1);
      return true;
    }
    if (depth_ == 2 && out_.form == JsonLayout::Form::kObject && text_[pos] == '[' &&
        IsTraceEventsValue(pos)) {
      if (out_.events_open != kNone || escaped_key_) {
        out_.inconsistent = true;
        return false;
      }
      EnterEvents(pos, 2);
    }
    return true;
  }

  bool OnClose(size_t pos) {
    if (depth_ == 0) {
      out_.inconsistent = true;
      return false;
    }
    // On-Demand skips the values it is not asked for by depth alone, so
    // "[1}" in an unread argument would pass unseen: checked here.
    if ((open_kinds_.back() == '{') != (text_[pos] == '}')) {
      out_.mismatched_bracket = pos;
      return false;
    }
    open_kinds_.pop_back();
    --depth_;
    if (events_depth_ > 0) {
      if (depth_ == events_depth_) {
        AfterElement(pos + 1);
      } else if (depth_ == events_depth_ - 1) {
        out_.events_close = pos;
        events_depth_ = 0;
      }
    }
    if (depth_ == 0) {
      out_.value_end = pos + 1;
      return false;
    }
    return true;
  }

  void EnterEvents(size_t pos, int64_t depth) {
    out_.events_open = pos;
    events_depth_ = depth;
    next_cut_ = pos + chunk_;
  }

  // `bracket` is the value of a "traceEvents" key: "traceEvents" <ws> : <ws> [
  // A '\\' before the key's first quote would make it the end of another
  // key; escaped_key_ then sends the caller to the whole-text parse.
  bool IsTraceEventsValue(size_t bracket) {
    constexpr std::string_view kKey = "\"traceEvents\"";
    size_t i = bracket;
    while (i > 0 && IsSpace(text_[i - 1])) --i;
    if (i == 0 || text_[i - 1] != ':') return false;
    --i;
    while (i > 0 && IsSpace(text_[i - 1])) --i;
    if (i < kKey.size() || text_.substr(i - kKey.size(), kKey.size()) != kKey) return false;
    escaped_key_ = i > kKey.size() && text_[i - kKey.size() - 1] == '\\';
    return true;
  }

  void AfterElement(size_t end) {
    ++out_.elements;
    last_element_end_ = end;
    if (end < next_cut_) return;
    size_t q = end;
    while (q < text_.size() && IsSpace(text_[q])) ++q;
    if (q < text_.size() && text_[q] == ',') {
      out_.cuts.push_back(q);
      next_cut_ = q + chunk_;
    }
  }

  void FindCompleteEnd() {
    out_.complete_end = last_element_end_ != kNone ? last_element_end_ : out_.events_open + 1;
    for (size_t q = out_.complete_end; q < text_.size(); ++q) {
      if (!IsSpace(text_[q]) && text_[q] != ',') {
        out_.cut_element = true;
        break;
      }
    }
    // A cut after the last complete element would leave an empty last chunk.
    while (!out_.cuts.empty() && out_.cuts.back() >= out_.complete_end) out_.cuts.pop_back();
  }

  std::string_view text_;
  size_t chunk_;
  JsonLayout out_;
  int64_t depth_ = 0;
  int64_t events_depth_ = 0;  // depth of the event array while inside it, else 0
  size_t last_element_end_ = kNone;
  size_t next_cut_ = 0;
  bool escaped_key_ = false;
  std::string open_kinds_;  // the open brackets, outermost first
};

}  // namespace

JsonLayout ScanJsonLayout(std::string_view text, size_t chunk_bytes) {
  return Scanner(text, chunk_bytes == 0 ? 1 : chunk_bytes).Run();
}

}  // namespace reverie::kineto
