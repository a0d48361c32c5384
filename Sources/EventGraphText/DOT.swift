import Foundation

/// Quoting for DOT.
public enum DOT {
  /// A double-quoted DOT string.
  ///
  /// Backslashes are kept: DOT reads `\l` and `\n` in labels.
  public static func quote(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }

  /// Text inside a record label, with the record's special characters escaped.
  public static func record(_ s: String) -> String {
    var out = ""
    for c in s {
      if "{}|<>".contains(c) { out.append("\\") }
      out.append(c)
    }
    return out
  }
}
