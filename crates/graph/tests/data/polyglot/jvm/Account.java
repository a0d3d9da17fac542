package bank;

public class Account {
    private long balance;

    public Account(String owner) {
        this.balance = 0;
    }

    public void deposit(long amount, boolean notify) {
        balance += amount;
    }
}
