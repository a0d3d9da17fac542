package bank;

public class Bank {
    public void open() {
        Account account = new Account("ann");
        account.deposit(5, false);
    }
}
