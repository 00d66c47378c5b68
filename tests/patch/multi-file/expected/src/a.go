package src

func a1() int { return 1 }
func a2() int { return 2 }
func a3() int { return 3 }
func a4() int { return 4 }
func a5() int { return 55 }
func a6() int { return 6 }
func a7() int { return 7 }
func a8() int { return 8 }
func a9() int { return 9 }
func a10() int { return 10 }
