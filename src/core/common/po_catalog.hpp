// The reader of the GNU gettext catalogs compiled into the binary (po/*.po, embedded as text by
// cmake/EmbedText.cmake): no bindtextdomain path, no .mo file beside the binary, so that translations work
// from any directory, from a static binary and from the wheel. The .po grammar read is the one msgfmt
// writes and reads (GNU gettext manual, "The Format of PO Files"): msgctxt, msgid, msgid_plural, msgstr and
// msgstr[N], continued strings, C escapes; fuzzy, untranslated and obsolete (#~) entries are left out, as
// msgfmt leaves them out of a .mo. `msgfmt --check` (a test) keeps the files valid for gettext itself.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/i18n.hpp"

namespace gpusage::i18n::detail {

struct PoCatalog {
  std::vector<Entry> entries;                          // translated entries, in file order
  std::unordered_map<std::string, std::size_t> index;  // key(context, msgid) -> entries[i]
  std::string plural_expression = "n != 1";            // the header's Plural-Forms "plural="
  unsigned long plurals = 2;                           // ... and "nplurals="

  const Entry* find(std::string_view context, std::string_view msgid) const;
  // The msgstr[] index for n by the header's rule, clamped to the forms there are.
  std::size_t plural_index(unsigned long n) const;
};

// gettext's key: the context and the msgid joined by EOT (\x04), the msgid alone without a context.
std::string key(std::string_view context, std::string_view msgid);

// Throws std::runtime_error naming the line of a malformed entry.
PoCatalog parse_po(std::string_view text);

// Evaluates a Plural-Forms C expression ("n != 1", "n%10==1 && n%100!=11 ? 0 : ...") for n.
// Throws std::runtime_error when it is not one.
unsigned long evaluate_plural(std::string_view expression, unsigned long n);

}  // namespace gpusage::i18n::detail
