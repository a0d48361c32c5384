import EventGraphModel

extension RegexMatcher {
  /// A `MATCHES` pattern under the operator's `[c]` and `[d]` options.
  ///
  /// - Returns: `nil` when `pattern` is not a valid ICU regular expression.
  convenience init?(_ pattern: String, options: QueryStringOptions) {
    self.init(
      pattern, caseInsensitive: options.contains(.caseInsensitive),
      diacriticInsensitive: options.contains(.diacriticInsensitive))
  }
}
