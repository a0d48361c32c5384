import EventGraphCrypto
import Foundation
import TestSupport
import Testing

/// Runs `body` with a fresh, empty directory that is removed when `body` returns.
func withTemporaryDirectory<R>(_ label: String = #function, _ body: (String) throws -> R) throws -> R {
  let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("crypto-tests-\(safe)-\(UUID().uuidString.prefix(8))").path
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}

extension SeededGenerator {
  /// `count` random bytes.
  mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}

/// The whole content of the file at `path`.
func fileBytes(_ path: String) throws -> [UInt8] {
  [UInt8](try #require(FileManager.default.contents(atPath: path)))
}

/// Writes `bytes` over the file at `path` from `offset`, in place, as damage would.
func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
  let handle = try #require(FileHandle(forUpdatingAtPath: path))
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(offset))
  try handle.write(contentsOf: Data(bytes))
}

/// The permission bits of the file at `path`.
func permissions(_ path: String) throws -> Int {
  try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

/// Sets the permission bits of the file at `path`.
func setPermissions(_ path: String, _ mode: Int) throws {
  try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}

extension Array where Element == UInt8 {
  /// Whether `needle` occurs anywhere in the array, as a run of consecutive bytes.
  func contains(run needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
    return (0...(count - needle.count)).contains { start in self[start..<(start + needle.count)].elementsEqual(needle) }
  }
}

/// Bytes from hex digits (test vectors).
func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.filter { !$0.isWhitespace })
  return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...($0 + 1)]), radix: 16) ?? 0 }
}

/// The error `body` throws, which must be a ``CryptoError``.
func cryptoError(_ body: () throws -> Void) throws -> CryptoError {
  let error = #expect(throws: CryptoError.self) { try body() }
  return try #require(error)
}
