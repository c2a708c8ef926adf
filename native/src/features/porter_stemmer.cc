// The Porter stemmer.
#include "features/porter_stemmer.h"

#include <cstring>

namespace rg::features {
namespace {

// Porter stemmer: a direct port of Martin Porter's reference ANSI C version (tartarus.org),
// including its two documented departures (-bli -> -ble, -logi -> -log), with state in a struct
// instead of statics so it is thread-safe.
class Porter {
 public:
  explicit Porter(char* b) : b_(b) {}

  int Stem(int last) {
    k_ = last;
    k0_ = 0;
    if (k_ <= k0_ + 1) return k_;
    Step1ab();
    if (k_ > k0_) {
      Step1c();
      Step2();
      Step3();
      Step4();
      Step5();
    }
    return k_;
  }

 private:
  bool Cons(int i) const {
    switch (b_[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return (i == k0_) ? true : !Cons(i - 1);
      default:
        return true;
    }
  }
  int M() const {
    int n = 0;
    int i = k0_;
    while (true) {
      if (i > j_) return n;
      if (!Cons(i)) break;
      i++;
    }
    i++;
    while (true) {
      while (true) {
        if (i > j_) return n;
        if (Cons(i)) break;
        i++;
      }
      i++;
      n++;
      while (true) {
        if (i > j_) return n;
        if (!Cons(i)) break;
        i++;
      }
      i++;
    }
  }
  bool VowelInStem() const {
    for (int i = k0_; i <= j_; i++) {
      if (!Cons(i)) return true;
    }
    return false;
  }
  bool DoubleC(int j) const {
    if (j < k0_ + 1) return false;
    if (b_[j] != b_[j - 1]) return false;
    return Cons(j);
  }
  bool Cvc(int i) const {
    if (i < k0_ + 2 || !Cons(i) || Cons(i - 1) || !Cons(i - 2)) return false;
    const char ch = b_[i];
    return !(ch == 'w' || ch == 'x' || ch == 'y');
  }
  bool Ends(const char* s) {
    const int length = static_cast<int>(std::strlen(s));
    if (length > k_ - k0_ + 1) return false;
    if (s[length - 1] != b_[k_]) return false;
    if (std::memcmp(b_ + k_ - length + 1, s, static_cast<size_t>(length)) != 0) return false;
    j_ = k_ - length;
    return true;
  }
  void SetTo(const char* s) {
    const int length = static_cast<int>(std::strlen(s));
    std::memmove(b_ + j_ + 1, s, static_cast<size_t>(length));
    k_ = j_ + length;
  }
  void R(const char* s) {
    if (M() > 0) SetTo(s);
  }
  void Step1ab() {
    if (b_[k_] == 's') {
      if (Ends("sses")) {
        k_ -= 2;
      } else if (Ends("ies")) {
        SetTo("i");
      } else if (b_[k_ - 1] != 's') {
        k_--;
      }
    }
    if (Ends("eed")) {
      if (M() > 0) k_--;
    } else if ((Ends("ed") || Ends("ing")) && VowelInStem()) {
      k_ = j_;
      if (Ends("at")) {
        SetTo("ate");
      } else if (Ends("bl")) {
        SetTo("ble");
      } else if (Ends("iz")) {
        SetTo("ize");
      } else if (DoubleC(k_)) {
        k_--;
        const char ch = b_[k_];
        if (ch == 'l' || ch == 's' || ch == 'z') k_++;
      } else if (M() == 1 && Cvc(k_)) {
        SetTo("e");
      }
    }
  }
  void Step1c() {
    if (Ends("y") && VowelInStem()) b_[k_] = 'i';
  }
  void Step2() {
    switch (b_[k_ - 1]) {
      case 'a':
        if (Ends("ational")) {
          R("ate");
          break;
        }
        if (Ends("tional")) {
          R("tion");
          break;
        }
        break;
      case 'c':
        if (Ends("enci")) {
          R("ence");
          break;
        }
        if (Ends("anci")) {
          R("ance");
          break;
        }
        break;
      case 'e':
        if (Ends("izer")) {
          R("ize");
          break;
        }
        break;
      case 'l':
        if (Ends("bli")) {
          R("ble");
          break;
        }
        if (Ends("alli")) {
          R("al");
          break;
        }
        if (Ends("entli")) {
          R("ent");
          break;
        }
        if (Ends("eli")) {
          R("e");
          break;
        }
        if (Ends("ousli")) {
          R("ous");
          break;
        }
        break;
      case 'o':
        if (Ends("ization")) {
          R("ize");
          break;
        }
        if (Ends("ation")) {
          R("ate");
          break;
        }
        if (Ends("ator")) {
          R("ate");
          break;
        }
        break;
      case 's':
        if (Ends("alism")) {
          R("al");
          break;
        }
        if (Ends("iveness")) {
          R("ive");
          break;
        }
        if (Ends("fulness")) {
          R("ful");
          break;
        }
        if (Ends("ousness")) {
          R("ous");
          break;
        }
        break;
      case 't':
        if (Ends("aliti")) {
          R("al");
          break;
        }
        if (Ends("iviti")) {
          R("ive");
          break;
        }
        if (Ends("biliti")) {
          R("ble");
          break;
        }
        break;
      case 'g':
        if (Ends("logi")) {
          R("log");
          break;
        }
        break;
      default:
        break;
    }
  }
  void Step3() {
    switch (b_[k_]) {
      case 'e':
        if (Ends("icate")) {
          R("ic");
          break;
        }
        if (Ends("ative")) {
          R("");
          break;
        }
        if (Ends("alize")) {
          R("al");
          break;
        }
        break;
      case 'i':
        if (Ends("iciti")) {
          R("ic");
          break;
        }
        break;
      case 'l':
        if (Ends("ical")) {
          R("ic");
          break;
        }
        if (Ends("ful")) {
          R("");
          break;
        }
        break;
      case 's':
        if (Ends("ness")) {
          R("");
          break;
        }
        break;
      default:
        break;
    }
  }
  void Step4() {
    if (k_ <= k0_) return;
    switch (b_[k_ - 1]) {
      case 'a':
        if (Ends("al")) break;
        return;
      case 'c':
        if (Ends("ance")) break;
        if (Ends("ence")) break;
        return;
      case 'e':
        if (Ends("er")) break;
        return;
      case 'i':
        if (Ends("ic")) break;
        return;
      case 'l':
        if (Ends("able")) break;
        if (Ends("ible")) break;
        return;
      case 'n':
        if (Ends("ant")) break;
        if (Ends("ement")) break;
        if (Ends("ment")) break;
        if (Ends("ent")) break;
        return;
      case 'o':
        if (Ends("ion") && j_ >= k0_ && (b_[j_] == 's' || b_[j_] == 't')) break;
        if (Ends("ou")) break;
        return;
      case 's':
        if (Ends("ism")) break;
        return;
      case 't':
        if (Ends("ate")) break;
        if (Ends("iti")) break;
        return;
      case 'u':
        if (Ends("ous")) break;
        return;
      case 'v':
        if (Ends("ive")) break;
        return;
      case 'z':
        if (Ends("ize")) break;
        return;
      default:
        return;
    }
    if (M() > 1) k_ = j_;
  }
  void Step5() {
    j_ = k_;
    if (b_[k_] == 'e') {
      const int a = M();
      if (a > 1 || (a == 1 && !Cvc(k_ - 1))) k_--;
    }
    if (b_[k_] == 'l' && DoubleC(k_) && M() > 1) k_--;
  }

  char* b_;
  int k_ = 0;
  int k0_ = 0;
  int j_ = 0;
};

}  // namespace

size_t PorterStem(char* buf, size_t n) {
  // Words longer than kMaxStemmedWord are left alone: no English word is that long, and it bounds
  // the stemmer's work (its consonant test recurses over runs of 'y').
  if (n <= 2 || n > kMaxStemmedWord) return n;
  for (size_t i = 0; i < n; ++i) {
    if (buf[i] < 'a' || buf[i] > 'z') return n;  // only plain lower-case ASCII words are stemmed
  }
  Porter p(buf);
  return static_cast<size_t>(p.Stem(static_cast<int>(n) - 1) + 1);
}

}  // namespace rg::features
