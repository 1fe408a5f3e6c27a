package org.example.isbn;

import java.util.Objects;

/** An ISBN-10 or ISBN-13, kept as its digits without separators. */
public final class Isbn {
  private final String digits;

  private Isbn(String digits) {
    this.digits = digits;
  }

  /** Parses an ISBN written with or without hyphens and spaces. */
  public static Isbn parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("ISBN is null");
    }
    String digits = text.replace("-", "").replace(" ", "").toUpperCase();
    if (digits.length() == 10) {
      if (!isValid10(digits)) {
        throw new IllegalArgumentException("invalid ISBN-10 check digit: " + text);
      }
    } else if (digits.length() == 13) {
      if (!isValid13(digits)) {
        throw new IllegalArgumentException("invalid ISBN-13 check digit: " + text);
      }
    } else {
      throw new IllegalArgumentException("an ISBN has 10 or 13 digits: " + text);
    }
    return new Isbn(digits);
  }

  static boolean isValid10(String digits) {
    int sum = 0;
    for (int i = 0; i < 10; i++) {
      char c = digits.charAt(i);
      int value;
      if (i == 9 && c == 'X') {
        value = 10;
      } else if (Character.isDigit(c)) {
        value = c - '0';
      } else {
        return false;
      }
      sum += (10 - i) * value;
    }
    return sum % 11 == 0;
  }

  static boolean isValid13(String digits) {
    int sum = 0;
    for (int i = 0; i < 13; i++) {
      char c = digits.charAt(i);
      if (!Character.isDigit(c)) {
        return false;
      }
      sum += (i % 2 == 0 ? 1 : 3) * (c - '0');
    }
    return sum % 10 == 0;
  }

  public boolean isIsbn13() {
    return digits.length() == 13;
  }

  /** The ISBN-13 form: an ISBN-10 gets the 978 prefix and a new check digit. */
  public Isbn toIsbn13() {
    if (isIsbn13()) {
      return this;
    }
    String body = "978" + digits.substring(0, 9);
    int sum = 0;
    for (int i = 0; i < 12; i++) {
      sum += (i % 2 == 0 ? 1 : 3) * (body.charAt(i) - '0');
    }
    int check = (10 - sum % 10) % 10;
    return new Isbn(body + check);
  }

  /** The ISBN-10 form, which only 978-prefixed ISBN-13s have. */
  public Isbn toIsbn10() {
    if (!isIsbn13()) {
      return this;
    }
    if (!digits.startsWith("978")) {
      throw new IllegalStateException("a 979 ISBN has no ISBN-10 form: " + digits);
    }
    String body = digits.substring(3, 12);
    int sum = 0;
    for (int i = 0; i < 9; i++) {
      sum += (10 - i) * (body.charAt(i) - '0');
    }
    int check = (11 - sum % 11) % 11;
    return new Isbn(body + (check == 10 ? "X" : String.valueOf(check)));
  }

  /** The registration group prefix of an ISBN-13: 978 or 979. */
  public String prefix() {
    return toIsbn13().digits.substring(0, 3);
  }

  public String digits() {
    return digits;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Isbn isbn && isbn.toIsbn13().digits.equals(toIsbn13().digits);
  }

  @Override
  public int hashCode() {
    return Objects.hash(toIsbn13().digits);
  }

  @Override
  public String toString() {
    return digits;
  }
}
